// Command docsvc serves the document storage API and public share links.
package main

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"example.com/docsvc/internal/auth"
	"example.com/docsvc/internal/docs"
)

type config struct {
	Addr        string
	DatabaseURL string
	BlobRoot    string
	SessionKey  []byte
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func loadConfig() (config, error) {
	cfg := config{
		Addr:        envOr("DOCSVC_ADDR", ":8080"),
		DatabaseURL: os.Getenv("DATABASE_URL"),
		BlobRoot:    envOr("DOCSVC_BLOB_ROOT", "/var/lib/docsvc/blobs"),
	}
	if cfg.DatabaseURL == "" {
		return cfg, errors.New("DATABASE_URL is required")
	}
	// SEED 1 [BLOCKER] (core/hardcoded-secrets) the session-signing key falls back to a literal committed in the repo, so anyone who reads the source can mint valid session cookies for any user
	cfg.SessionKey = []byte(envOr("DOCSVC_SESSION_KEY", "dsv-sess-4b8e1f27c95a4d30b6e2a9f1c7d35e08"))
	return cfg, nil
}

// ipLimiter is a token bucket per client address for the public share pages.
type ipLimiter struct {
	mu       sync.Mutex
	visitors map[string]*visitor
	rate     float64
	burst    float64
}

type visitor struct {
	tokens float64
	last   time.Time
}

func newIPLimiter(perSecond, burst float64) *ipLimiter {
	return &ipLimiter{visitors: make(map[string]*visitor), rate: perSecond, burst: burst}
}

func (l *ipLimiter) allow(ip string, now time.Time) bool {
	// SEED 4 [MAJOR] (core/race-condition) allow reads and writes l.visitors and the bucket fields without holding l.mu while other requests and evictIdle do the same; concurrent map writes abort the whole process
	v, ok := l.visitors[ip]
	if !ok {
		v = &visitor{tokens: l.burst, last: now}
		l.visitors[ip] = v
	}
	v.tokens = math.Min(l.burst, v.tokens+now.Sub(v.last).Seconds()*l.rate)
	v.last = now
	if v.tokens < 1 {
		return false
	}
	v.tokens--
	return true
}

func (l *ipLimiter) evictIdle(now time.Time, idle time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ip, v := range l.visitors {
		if now.Sub(v.last) > idle {
			delete(l.visitors, ip)
		}
	}
}

func (l *ipLimiter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// BORDERLINE 1 RemoteAddr is the direct peer; behind a load balancer every client shares its address, which depends on the deployment outside this diff
		ip, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			ip = r.RemoteAddr
		}
		if !l.allow(ip, time.Now()) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func routes(h *docs.Handler, verifier *auth.Verifier, limiter *ipLimiter) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle("GET /s/{token}", limiter.middleware(http.HandlerFunc(h.ViewShared)))
	mux.Handle("GET /s/{token}/download", limiter.middleware(http.HandlerFunc(h.DownloadShared)))

	api := http.NewServeMux()
	// SEED 3 [MAJOR] (core/missing-registration) {symbol: Delete} the new soft-delete handler h.Delete is never mounted, so DELETE /api/documents/{id} returns 405 and users cannot delete documents (and PurgeDeleted never has anything to purge)
	api.HandleFunc("GET /api/documents", h.List)
	api.HandleFunc("POST /api/documents", h.Upload)
	api.HandleFunc("GET /api/documents/search", h.Search)
	api.HandleFunc("GET /api/documents/{id}", h.Get)
	api.HandleFunc("GET /api/documents/{id}/content", h.Download)
	api.HandleFunc("GET /api/documents/{id}/preview", h.Preview)
	api.HandleFunc("POST /api/documents/{id}/shares", h.Share)
	// SEED 2 [BLOCKER] (core/missing-authorization) the purge endpoint is only behind authentication, not auth.RequireRole("admin"), so any signed-in user can permanently delete every user's trashed documents
	api.HandleFunc("POST /api/admin/purge", h.PurgeDeleted)
	mux.Handle("/api/", verifier.Middleware(api))
	return mux
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := loadConfig()
	if err != nil {
		logger.Error("invalid configuration", "err", err)
		os.Exit(1)
	}

	db, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		logger.Error("open database", "err", err)
		os.Exit(1)
	}
	defer db.Close()
	db.SetMaxOpenConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	limiter := newIPLimiter(2, 20)
	go func() {
		ticker := time.NewTicker(time.Minute)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-ticker.C:
				limiter.evictIdle(now, 10*time.Minute)
			}
		}
	}()

	h := docs.NewHandler(docs.NewStore(db), cfg.BlobRoot, logger)
	// SEED 5 [MAJOR] (core/missing-timeout) the server sets no ReadHeaderTimeout/ReadTimeout/IdleTimeout, so slow or idle clients (Slowloris) can hold connections and goroutines open indefinitely
	srv := &http.Server{Addr: cfg.Addr, Handler: routes(h, auth.NewVerifier(cfg.SessionKey), limiter)}

	// ListenAndServe returns as soon as Shutdown starts; main waits on shutdownDone so
	// in-flight requests finish (and the deferred db.Close runs) before the process exits.
	shutdownDone := make(chan struct{})
	go func() {
		defer close(shutdownDone)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			logger.Error("graceful shutdown", "err", err)
		}
	}()

	logger.Info("listening", "addr", cfg.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("server stopped", "err", err)
		os.Exit(1)
	}
	<-shutdownDone
}
