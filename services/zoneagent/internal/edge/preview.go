package edge

import (
	"net"
	"net/http"
	"time"

	"tori.dev/contract/names"
)

// Previews at the edge (docs/previews.md, "At the edge"): a preview is served at
// <names.PreviewLabel(slug, id)>.<PreviewsDomain>. The id alone names it; the label's slug
// part must be the preview's own (else 404, as for an unknown id), a removed preview
// answers 410, and every answer under PreviewsDomain says noindex.

// goneBody is a removed preview's answer: short, and nothing about why.
const goneBody = "gone: this preview was removed\n"

// previewHost reads the preview id and label a Host names under PreviewsDomain.
func (e *Edge) previewHost(host string) (id, label string, ok bool) {
	if e.PreviewsDomain == "" {
		return "", "", false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return names.PreviewIDFromHost(host, e.PreviewsDomain)
}

// livePreview is the live preview a Host names, its label checked.
func (e *Edge) livePreview(host string) (Preview, bool) {
	id, label, ok := e.previewHost(host)
	if !ok {
		return Preview{}, false
	}
	p, ok := e.Table.LookupPreview(id)
	if !ok || p.Removed || p.DeployID == "" || label != names.PreviewLabel(p.Slug, p.ID) {
		return Preview{}, false
	}
	return p, true
}

// servePreview answers a request for a host under PreviewsDomain; it reports false when the
// host is not one (the caller routes it as any other).
func (e *Edge) servePreview(w http.ResponseWriter, r *http.Request) bool {
	id, label, ok := e.previewHost(r.Host)
	if !ok {
		return false // not a preview's host: routed as any other (an unknown one is 404)
	}
	w.Header().Set("X-Robots-Tag", "noindex")
	p, found := e.Table.LookupPreview(id)
	switch {
	case found && p.Removed && p.Slug == "":
		gone(w) // removed before the zone learned its slug: its id alone names it
	case !found || label != names.PreviewLabel(p.Slug, p.ID):
		notFound(w)
	case p.Removed:
		gone(w)
	case p.DeployID == "":
		notFound(w) // recorded, never served (none should be)
	case e.Table.Paused(p.AppID, time.Now()):
		paused(w)
	case p.Kind.Static():
		e.serveStatic(w, r, p.Route())
	case e.Services == nil:
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
	default:
		e.Services.ServeHTTP(w, r, p.Route())
	}
	return true
}

func gone(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusGone)
	w.Write([]byte(goneBody))
}
