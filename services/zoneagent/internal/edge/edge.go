package edge

import (
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Services proxies a request to a live service's process, waking it if it naps.
type Services interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request, route Route)
}

// Edge answers requests by Host header.
type Edge struct {
	Domain   string // APPS_DOMAIN
	SitesDir string // DATA_DIR/sites: <app>/current points at the live static revision
	Table    *Table
	Services Services
}

// ServeHTTP routes by Host: <slug>.<Domain>. Anything else is a plain 404, which tells a
// prober nothing about which apps exist.
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := e.route(r.Host)
	if !ok {
		notFound(w)
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

// serveStatic serves a file of the app's live revision. The revision folder is opened as an
// os.Root through the `current` link at request time, so a switch (an atomic rename of the
// link) takes effect between requests and no request path or link inside the site can reach
// outside it.
func (e *Edge) serveStatic(w http.ResponseWriter, r *http.Request, route Route) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	root, err := os.OpenRoot(filepath.Join(e.SitesDir, route.AppID, "current"))
	if err != nil {
		notFound(w)
		return
	}
	defer root.Close()
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "."
	}
	f, err := root.Open(name)
	if err != nil {
		notFound(w)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		notFound(w)
		return
	}
	if info.IsDir() {
		f.Close()
		name = path.Join(name, "index.html")
		if f, err = root.Open(name); err != nil {
			notFound(w)
			return
		}
		defer f.Close()
		if info, err = f.Stat(); err != nil || info.IsDir() {
			notFound(w)
			return
		}
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, info.Name(), info.ModTime(), f)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte("not found\n"))
}
