// Package server serves the console's single-page app (its built files, index.html for every
// other path, /config.json, headers that keep the page to its own origin) and holds its
// sessions: the page signs in through /session/verify, and its /api/ calls are forwarded to
// the API with the session's token, which never reaches the browser.
package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// notBuilt is what a clone that has not run `npm run build` answers, instead of a 404.
const notBuilt = `<!doctype html><meta charset="utf-8"><title>Tori console</title>
<p>The console is not built yet: run <code>make build</code> (it runs <code>npm ci</code> and
<code>npm run build</code> in <code>console/</code>), then start it again.</p>`

// Handler serves the console.
type Handler struct {
	cfg       Config
	sessions  SessionStore
	client    *http.Client
	forwarder http.Handler
	rdb       *redis.Client // the redis session store's client, nil for memory
	files     fs.FS
	index     []byte
	built     bool
	config    []byte
	csp       string
	started   time.Time
}

// New serves files (the built dist/ folder) with cfg.
func New(cfg Config, files fs.FS) (*Handler, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		cfg:      cfg,
		sessions: newMemoryStore(time.Now),
		// The console's own calls (verify, logout) wait no longer than a page would.
		client:  &http.Client{Timeout: 30 * time.Second, Transport: apiTransport(cfg.APISourceAddr)},
		files:   files,
		started: time.Now().UTC(),
	}
	if cfg.SessionStore == "redis" {
		opts, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, errors.New("REDIS_URL is not a redis:// URL")
		}
		h.rdb = redis.NewClient(opts)
		h.sessions = newRedisStore(h.rdb, time.Now)
	}
	fwd := newForwarder(h, base)
	fwd.Transport = h.client.Transport
	h.forwarder = fwd
	index, err := fs.ReadFile(files, "index.html")
	if err == nil {
		h.index, h.built = index, true
	} else {
		h.index = []byte(notBuilt)
	}
	h.config, err = json.Marshal(map[string]string{"baseUrl": cfg.BaseURL})
	if err != nil {
		return nil, err
	}
	// Only the console's own files run, and the page talks to its own server alone.
	h.csp = strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data:",
		"font-src 'self'",
		"connect-src 'self'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
	return h, nil
}

// Built reports whether the app's files are there (false in a fresh clone before npm).
func (h *Handler) Built() bool { return h.built }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// /auth/verify?token=… must never leak its code to another site through Referer; same-origin
	// (not no-referrer) so that the page's own calls carry their Origin, which the CSRF check reads.
	hd.Set("Referrer-Policy", "same-origin")
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/"):
		h.forward(w, r)
		return
	case r.URL.Path == "/session" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.getSession(w, r)
		return
	case r.URL.Path == "/session/verify" && r.Method == http.MethodPost:
		h.verify(w, r)
		return
	case r.URL.Path == "/session/logout" && r.Method == http.MethodPost:
		h.logout(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/config.json":
		hd.Set("Content-Type", "application/json")
		hd.Set("Cache-Control", "no-cache")
		w.Write(h.config)
		return
	case "/readyz":
		// Ready once the session store answers: a console without it cannot sign anyone in.
		if h.rdb != nil {
			if err := h.rdb.Ping(r.Context()).Err(); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "sessionStore": "unavailable"})
				return
			}
		}
		hd.Set("Content-Type", "application/json")
		w.Write([]byte(`{"ready":true}`))
		return
	case "/healthz":
		hd.Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"service": "console", "built": h.built, "startedAt": h.started})
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name != "" && name != "index.html" && !strings.HasPrefix(path.Base(name), ".") {
		if b, err := fs.ReadFile(h.files, name); err == nil {
			h.file(w, r, name, b)
			return
		}
		// A missing asset is a 404, not the app: a stale page asking for an old bundle must
		// fail loudly rather than parse HTML as JavaScript.
		if strings.HasPrefix(name, "assets/") {
			http.NotFound(w, r)
			return
		}
	}
	// Every other path is a route of the app.
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "index.html", h.started, bytes.NewReader(h.index))
}

func (h *Handler) file(w http.ResponseWriter, r *http.Request, name string, b []byte) {
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if strings.HasPrefix(name, "assets/") {
		// Vite names every asset by its content's hash.
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, name, h.started, bytes.NewReader(b))
}
