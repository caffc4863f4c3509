package docs

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"example.com/docsvc/internal/auth"
)

const (
	defaultShareTTL  = 7 * 24 * time.Hour
	maxShareTTLHours = 30 * 24
)

type shareRequest struct {
	TTLHours int `json:"ttl_hours"`
}

type shareResponse struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Share creates a public, expiring link to one of the caller's documents.
func (h *Handler) Share(w http.ResponseWriter, r *http.Request) {
	doc, err := h.ownedDocument(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req shareRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&req); err != nil {
		http.Error(w, "invalid JSON body", http.StatusBadRequest)
		return
	}
	ttl := defaultShareTTL
	if req.TTLHours > 0 && req.TTLHours <= maxShareTTLHours {
		ttl = time.Duration(req.TTLHours) * time.Hour
	}
	link, err := h.store.CreateShare(r.Context(), doc.ID, time.Now().Add(ttl))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, shareResponse{URL: "/s/" + link.Token, ExpiresAt: link.ExpiresAt})
}

// resolveShare looks up the {token} link and writes the error response itself when it is unusable.
func (h *Handler) resolveShare(w http.ResponseWriter, r *http.Request) (ShareLink, Document, bool) {
	link, doc, err := h.store.ResolveShare(r.Context(), r.PathValue("token"))
	if err != nil {
		h.fail(w, r, err)
		return ShareLink{}, Document{}, false
	}
	if !time.Now().Before(link.ExpiresAt) {
		http.Error(w, "this link has expired", http.StatusGone)
		return ShareLink{}, Document{}, false
	}
	return link, doc, true
}

var sharePage = template.Must(template.New("share").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body>
<main>
  <h1>{{.Title}}</h1>
  <p>{{.ContentType}}, {{.SizeKB}} KB, shared until {{.ExpiresAt}}</p>
  <a href="/s/{{.Token}}/download">Download</a>
</main>
</body>
</html>`))

type sharePageData struct {
	Title       string
	ContentType string
	SizeKB      int64
	ExpiresAt   string
	Token       string
}

func (h *Handler) ViewShared(w http.ResponseWriter, r *http.Request) {
	link, doc, ok := h.resolveShare(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	err := sharePage.Execute(w, sharePageData{
		Title:       doc.Title,
		ContentType: doc.ContentType,
		SizeKB:      doc.Size / 1024,
		ExpiresAt:   link.ExpiresAt.UTC().Format(time.RFC1123),
		Token:       link.Token,
	})
	if err != nil {
		h.log.Warn("render share page", "doc", doc.ID, "err", err)
	}
}

func (h *Handler) DownloadShared(w http.ResponseWriter, r *http.Request) {
	_, doc, ok := h.resolveShare(w, r)
	if !ok {
		return
	}
	h.serveBlob(w, r, doc)
}

// Delete moves a document to the trash; PurgeDeleted removes it for good after trashRetention.
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) {
	doc, err := h.ownedDocument(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.store.SoftDelete(r.Context(), doc.ID, doc.OwnerID); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("document trashed", "doc", doc.ID, "user", auth.UserFrom(r.Context()).ID)
	w.WriteHeader(http.StatusNoContent)
}

// PurgeDeleted removes each trashed document's blob first and its row only after that, so
// a failed removal or a crash leaves the row in place and the next purge retries it.
func (h *Handler) PurgeDeleted(w http.ResponseWriter, r *http.Request) {
	trashed, err := h.store.TrashedBefore(r.Context(), time.Now().Add(-trashRetention))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	removed := make([]int64, 0, len(trashed))
	failed := 0
	for _, doc := range trashed {
		if err := os.Remove(filepath.Join(h.blobRoot, doc.BlobKey)); err != nil && !errors.Is(err, os.ErrNotExist) {
			h.log.Warn("blob not removed; row kept for the next purge", "doc", doc.ID, "key", doc.BlobKey, "err", err)
			failed++
			continue
		}
		removed = append(removed, doc.ID)
	}
	purged, err := h.store.DeleteTrashed(r.Context(), removed)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("trash purged", "documents", purged, "blob_errors", failed, "by", auth.UserFrom(r.Context()).ID)
	writeJSON(w, http.StatusOK, map[string]int64{"purged": purged, "blob_errors": int64(failed)})
}
