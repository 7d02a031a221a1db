package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/sites"
)

// Services proxies a request to a live service's process, waking it if it naps.
type Services interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request, route Route)
}

// Sites opens a file of a static revision by its cleaned path ("" for the root; a folder
// means its index.html); sites.ErrNotFound when there is none.
type Sites interface {
	Open(ctx context.Context, appID, deployID, name string) (*sites.Object, error)
}

// Edge answers requests by Host header.
type Edge struct {
	Domain string // APPS_DOMAIN
	// PreviewsDomain (PREVIEWS_DOMAIN) holds the previews' hosts (preview.go); "": none.
	PreviewsDomain string
	Sites          Sites // the zone's static sites (the store, through a local cache); nil: none
	Table          *Table
	Services       Services
	// Counts counts every answered request of an app's host (count.go); nil: none counted
	// (EDGE_METRICS=off).
	Counts Counter
}

// ServeHTTP routes by Host: <slug>.<Domain>. Anything else is a plain 404, which tells a
// prober nothing about which apps exist.
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e.servePreview(w, r) { // preview.go
		return
	}
	route, ok := e.route(r.Host)
	if !ok {
		notFound(w)
		return
	}
	if e.Counts != nil { // the customer's request metrics (count.go)
		sw, start := e.counting(w)
		defer e.counted(route.AppID, sw, start)
		// The request clock's start serves the hold's check too: one clock read, not two.
		e.serveApp(sw, r, route, clockBase.Add(start))
		return
	}
	e.serveApp(w, r, route, time.Now())
}

// serveApp answers a request routed to an app at now.
func (e *Edge) serveApp(w http.ResponseWriter, r *http.Request, route Route, now time.Time) {
	if e.Table.Paused(route.AppID, now) {
		paused(w)
		return
	}
	if route.Kind.Static() {
		e.serveStatic(w, r, route)
		return
	}
	if e.Services == nil {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	e.Services.ServeHTTP(w, r, route)
}

// route finds the app a Host header names: <slug>.<Domain>, or an active custom hostname.
func (e *Edge) route(host string) (Route, bool) {
	if slug, ok := e.slugOf(host); ok {
		return e.Table.Lookup(slug)
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return e.Table.LookupHost(strings.ToLower(strings.TrimSuffix(host, ".")))
}

func (e *Edge) slugOf(host string) (string, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	slug, ok := strings.CutSuffix(host, "."+e.Domain)
	if !ok || slug == "" || strings.Contains(slug, ".") {
		return "", false
	}
	return slug, true
}

// serveStatic serves a file of the app's live revision from the zone's site store (through
// the edge's local cache). The revision is the route's, so a switch (a table update) takes
// effect between requests. Dotfiles are answered as missing (hidden). A service's paths are
// its own business: this rule is for the files the edge itself serves.
func (e *Edge) serveStatic(w http.ResponseWriter, r *http.Request, route Route) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// URL.Path is already percent-decoded (`/%2Eenv` is `/.env`), and the dot rule reads the
	// cleaned path, so `/a/../.env` and `/.well-known/../.git/config` are caught too.
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if hidden(name) || e.Sites == nil {
		notFound(w)
		return
	}
	f, err := e.Sites.Open(r.Context(), route.AppID, route.DeployID, name)
	if errors.Is(err, sites.ErrNotFound) {
		notFound(w)
		return
	}
	if err != nil {
		// The store is out of reach and the file is not cached: a visitor may retry.
		w.Header().Set("Retry-After", "5")
		http.Error(w, "site temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	defer f.Close()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// The content type was decided when the revision was published (by extension, else
	// sniffed), as net/http would have decided it from the file.
	w.Header().Set("Content-Type", f.ContentType)
	// The validator is the revision, not the file's time: two deploys within one second (or
	// of files with the same reproducible mtime) would share a Last-Modified, and a browser
	// revalidating with it would be told its copy of the old site is current. A URL's content
	// never changes within a revision, so the revision is an exact strong ETag (a digest of
	// its id: a visitor learns no id of the API's). no-cache: a browser always asks, and a
	// 304 keeps that cheap.
	sum := sha256.Sum256([]byte(route.DeployID))
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:12])+`"`)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, f.Name, time.Time{}, f)
}

// pausedPage says the site is paused and nothing about why: a visitor is not told about the
// owner's bill.
const pausedPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Site paused</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 20vh auto; padding: 0 1rem; color: #222">
<h1 style="font-size: 1.5rem">This site is paused</h1>
<p>It is not available right now. Please try again later.</p>
</body></html>
`

func paused(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", "3600")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(pausedPage))
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte("not found\n"))
}
