package docs

import (
	"context"
	"database/sql"
	"errors"
	"math/rand"
	"time"
)

// ErrNotFound is returned when a row does not exist or is not visible to the caller.
var ErrNotFound = errors.New("not found")

type Document struct {
	ID          int64     `json:"id"`
	OwnerID     int64     `json:"owner_id"`
	Title       string    `json:"title"`
	ContentType string    `json:"content_type"`
	BlobKey     string    `json:"-"`
	Size        int64     `json:"size_bytes"`
	CreatedAt   time.Time `json:"created_at"`
}

type ShareLink struct {
	Token      string
	DocumentID int64
	ExpiresAt  time.Time
}

type Store struct {
	db *sql.DB
}

func NewStore(db *sql.DB) *Store {
	return &Store{db: db}
}

const documentColumns = "id, owner_id, title, content_type, blob_key, size_bytes, created_at"

type scanner interface {
	Scan(dest ...any) error
}

func scanDocument(row scanner) (Document, error) {
	var d Document
	err := row.Scan(&d.ID, &d.OwnerID, &d.Title, &d.ContentType, &d.BlobKey, &d.Size, &d.CreatedAt)
	return d, err
}

func (s *Store) Get(ctx context.Context, id int64) (Document, error) {
	d, err := scanDocument(s.db.QueryRowContext(ctx,
		"SELECT "+documentColumns+" FROM documents WHERE id = $1 AND deleted_at IS NULL", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, ErrNotFound
	}
	return d, err
}

func (s *Store) ListByOwner(ctx context.Context, ownerID int64, limit int) ([]Document, error) {
	// SEED 14 [MINOR] (core/resource-leak) rows is never closed: when scanDocument fails (a row that no longer matches the struct, e.g. after a schema change) the function returns early and the pooled connection is never released; repeated, this drains the pool
	rows, err := s.db.QueryContext(ctx, "SELECT "+documentColumns+" FROM documents WHERE owner_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC LIMIT $2", ownerID, limit)
	if err != nil {
		return nil, err
	}
	docs := []Document{}
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, rows.Err()
}

// Search matches the caller's documents whose title contains q.
func (s *Store) Search(ctx context.Context, ownerID int64, q string) ([]Document, error) {
	// SEED 13 [BLOCKER] (core/sql-injection) the search text is concatenated into the SQL string, so q=' OR owner_id <> 0 -- lists every user's documents and other payloads can modify data
	query := "SELECT " + documentColumns + " FROM documents WHERE owner_id = $1 AND deleted_at IS NULL" +
		" AND title ILIKE '%" + q + "%' ORDER BY created_at DESC LIMIT 50"
	rows, err := s.db.QueryContext(ctx, query, ownerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	docs := []Document{}
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, rows.Err()
}

func (s *Store) Create(ctx context.Context, d Document) (Document, error) {
	err := s.db.QueryRowContext(ctx,
		"INSERT INTO documents (owner_id, title, content_type, blob_key, size_bytes)"+
			" VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at",
		d.OwnerID, d.Title, d.ContentType, d.BlobKey, d.Size).Scan(&d.ID, &d.CreatedAt)
	return d, err
}

func (s *Store) SoftDelete(ctx context.Context, id, ownerID int64) error {
	res, err := s.db.ExecContext(ctx,
		"UPDATE documents SET deleted_at = now() WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL",
		id, ownerID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// TrashedBefore returns the blob keys and ids of documents trashed before cutoff. The rows
// stay in place (invisible to every reader) until DeleteTrashed removes them, so a blob is
// never left on disk without a row that names it.
func (s *Store) TrashedBefore(ctx context.Context, cutoff time.Time) ([]Document, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT "+documentColumns+" FROM documents WHERE deleted_at IS NOT NULL AND deleted_at < $1 ORDER BY deleted_at", cutoff)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var docs []Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, rows.Err()
}

// DeleteTrashed removes the rows of trashed documents whose blobs are gone and returns how
// many rows it removed.
func (s *Store) DeleteTrashed(ctx context.Context, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx,
		"DELETE FROM documents WHERE id = ANY($1) AND deleted_at IS NOT NULL", ids)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

const tokenAlphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func newShareToken() string {
	b := make([]byte, 24)
	for i := range b {
		// SEED 15 [CRITICAL] (core/insecure-randomness) share tokens are the only secret guarding a public link, but math/rand is not cryptographically secure and its outputs can be predicted from observed tokens
		b[i] = tokenAlphabet[rand.Intn(len(tokenAlphabet))]
	}
	return string(b)
}

func (s *Store) CreateShare(ctx context.Context, documentID int64, expiresAt time.Time) (ShareLink, error) {
	link := ShareLink{Token: newShareToken(), DocumentID: documentID, ExpiresAt: expiresAt.UTC()}
	_, err := s.db.ExecContext(ctx,
		"INSERT INTO share_links (token, document_id, expires_at) VALUES ($1, $2, $3)",
		link.Token, link.DocumentID, link.ExpiresAt)
	return link, err
}

func (s *Store) ResolveShare(ctx context.Context, token string) (ShareLink, Document, error) {
	link := ShareLink{Token: token}
	row := s.db.QueryRowContext(ctx,
		"SELECT l.document_id, l.expires_at, d.id, d.owner_id, d.title, d.content_type, d.blob_key,"+
			" d.size_bytes, d.created_at FROM share_links l JOIN documents d ON d.id = l.document_id"+
			" WHERE l.token = $1 AND d.deleted_at IS NULL", token)
	var d Document
	err := row.Scan(&link.DocumentID, &link.ExpiresAt,
		&d.ID, &d.OwnerID, &d.Title, &d.ContentType, &d.BlobKey, &d.Size, &d.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return ShareLink{}, Document{}, ErrNotFound
	}
	return link, d, err
}
