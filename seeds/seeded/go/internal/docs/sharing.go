package docs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"example.com/docsvc/internal/auth"
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
	// SEED 12 [INFO] (core/magic-number) 168 and 720 are unexplained literals for the default and maximum link lifetime; name them (defaultShareTTL, maxShareTTL)
	ttl := 168 * time.Hour
	if req.TTLHours > 0 && req.TTLHours <= 720 {
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
	// SEED 11 [CRITICAL] (core/logic-error) the expiry test is inverted: links still inside their lifetime are answered 410 while expired links stay readable forever
	if link.ExpiresAt.After(time.Now()) {
		http.Error(w, "this link has expired", http.StatusGone)
		return ShareLink{}, Document{}, false
	}
	return link, doc, true
}

// SEED 10 [BLOCKER] (core/xss) {lines: 20} the uploader-chosen title is written into this HTML page with fmt.Fprintf and no escaping, so a title like <script>...</script> runs in every visitor's browser
const sharePage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>%s</title></head>
<body>
<main>
  <h1>%s</h1>
  <p>%s, %d KB, shared until %s</p>
  <a href="/s/%s/download">Download</a>
</main>
</body>
</html>`

func (h *Handler) ViewShared(w http.ResponseWriter, r *http.Request) {
	link, doc, ok := h.resolveShare(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, sharePage, doc.Title, doc.Title, doc.ContentType, doc.Size/1024, link.ExpiresAt.UTC().Format(time.RFC1123), link.Token)
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
