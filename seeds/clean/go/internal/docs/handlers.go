package docs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"example.com/docsvc/internal/auth"
)

const (
	maxTitleLength = 255
	maxUploadBytes = 50 << 20
	listPageSize   = 100
	trashRetention = 30 * 24 * time.Hour

	// maxConcurrentPreviews caps the pdftoppm processes one instance runs at a time.
	maxConcurrentPreviews = 4
)

var (
	previewSlots = make(chan struct{}, maxConcurrentPreviews)
	previewEnv   = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C"}
)

// Handler serves the document API. Blobs live as files under blobRoot, named by a random key.
type Handler struct {
	store    *Store
	blobRoot string
	log      *slog.Logger
}

func NewHandler(store *Store, blobRoot string, log *slog.Logger) *Handler {
	return &Handler{store: store, blobRoot: blobRoot, log: log}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrNotFound) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// ownedDocument loads the {id} document and hides it unless the caller owns it.
func (h *Handler) ownedDocument(r *http.Request) (Document, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return Document{}, ErrNotFound
	}
	doc, err := h.store.Get(r.Context(), id)
	if err != nil {
		return Document{}, err
	}
	if doc.OwnerID != auth.UserFrom(r.Context()).ID {
		return Document{}, ErrNotFound
	}
	return doc, nil
}

func (h *Handler) List(w http.ResponseWriter, r *http.Request) {
	docs, err := h.store.ListByOwner(r.Context(), auth.UserFrom(r.Context()).ID, listPageSize)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, docs)
}

func (h *Handler) Search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" || len(q) > 200 {
		http.Error(w, "q must be 1-200 characters", http.StatusBadRequest)
		return
	}
	docs, err := h.store.Search(r.Context(), auth.UserFrom(r.Context()).ID, q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, docs)
}

func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	doc, err := h.ownedDocument(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

func newBlobKey() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeBlob streams body into a temp file under blobRoot, flushes it to disk and only then
// moves it into place as key, so a reader never sees a partial blob and memory stays flat.
func (h *Handler) writeBlob(key string, body io.Reader) (int64, error) {
	f, err := os.CreateTemp(h.blobRoot, "upload-*")
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, body)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(h.blobRoot, key))
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return n, nil
}

// BORDERLINE 3 each upload is bounded (maxUploadBytes) but a per-user storage quota is product policy outside this diff; a reviewer may defensibly ask for one
func (h *Handler) Upload(w http.ResponseWriter, r *http.Request) {
	title := strings.TrimSpace(r.URL.Query().Get("title"))
	if title == "" || len(title) > maxTitleLength {
		http.Error(w, "title must be 1-255 characters", http.StatusBadRequest)
		return
	}
	contentType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		http.Error(w, "invalid Content-Type", http.StatusUnsupportedMediaType)
		return
	}
	key, err := newBlobKey()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := h.writeBlob(key, http.MaxBytesReader(w, r.Body, maxUploadBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "document exceeds the upload limit", http.StatusRequestEntityTooLarge)
			return
		}
		h.fail(w, r, err)
		return
	}
	doc, err := h.store.Create(r.Context(), Document{
		OwnerID:     auth.UserFrom(r.Context()).ID,
		Title:       title,
		ContentType: contentType,
		BlobKey:     key,
		Size:        size,
	})
	if err != nil {
		os.Remove(filepath.Join(h.blobRoot, key))
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, doc)
}

func (h *Handler) serveBlob(w http.ResponseWriter, r *http.Request, doc Document) {
	f, err := os.Open(filepath.Join(h.blobRoot, doc.BlobKey))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", doc.ContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Owner downloads and share links are access-checked on every request (a link expires,
	// a document is trashed), so no browser or shared cache may keep a copy.
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": doc.Title}))
	http.ServeContent(w, r, "", doc.CreatedAt, f)
}

func (h *Handler) Download(w http.ResponseWriter, r *http.Request) {
	doc, err := h.ownedDocument(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.serveBlob(w, r, doc)
}

// Preview renders one page of a PDF document as a PNG.
func (h *Handler) Preview(w http.ResponseWriter, r *http.Request) {
	doc, err := h.ownedDocument(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if doc.ContentType != "application/pdf" {
		http.Error(w, "previews are only available for PDF documents", http.StatusUnsupportedMediaType)
		return
	}
	select {
	case previewSlots <- struct{}{}:
		defer func() { <-previewSlots }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many previews in progress, try again shortly", http.StatusServiceUnavailable)
		return
	}
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			http.Error(w, "page must be a positive integer", http.StatusBadRequest)
			return
		}
		page = n
	}
	dir, err := os.MkdirTemp("", "preview-")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	out := filepath.Join(dir, "page")
	src := filepath.Join(h.blobRoot, doc.BlobKey)
	pageArg := strconv.Itoa(page)
	// BORDERLINE 2 pdftoppm runs with no memory limit of its own: a PDF with a huge page box makes it allocate a large bitmap (bounded by poppler, at most maxConcurrentPreviews at once, each for at most 20 s); whether that can starve the service depends on the container's memory limit and the OOM killer's choice, which are outside this diff
	cmd := exec.CommandContext(ctx, "pdftoppm", "-png", "-singlefile", "-r", "72", "-f", pageArg, "-l", pageArg, src, out)
	cmd.Env = previewEnv // the renderer parses untrusted bytes: it gets none of the service's secrets
	if msg, err := cmd.CombinedOutput(); err != nil {
		h.log.Warn("preview failed", "doc", doc.ID, "err", err, "output", string(msg))
		http.Error(w, "could not render that page", http.StatusUnprocessableEntity)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	http.ServeFile(w, r, out+".png")
}
