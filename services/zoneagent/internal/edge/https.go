package edge

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// HSTS is sent on the TLS answers of <slug>.<APPS_DOMAIN>: two years, the value browsers'
// preload lists expect. Custom hostnames get none: the customer has not opted in (there is
// no field for it yet), and a browser that kept it would refuse the site if it ever left Tori.
const HSTS = "max-age=63072000"

// acmeChallengePath is where HTTP-01 challenges are read (RFC 8555 §8.3).
const acmeChallengePath = "/.well-known/acme-challenge/"

// Serves reports whether the edge serves host now (<slug>.<APPS_DOMAIN> of a live app, or an
// active custom hostname): the only names a certificate is ordered for.
func (e *Edge) Serves(host string) bool {
	if _, ok := e.livePreview(host); ok { // preview.go
		return true
	}
	_, ok := e.route(host)
	return ok
}

// Owner names the app that serves host and whether host is a custom hostname (not
// <slug>.<APPS_DOMAIN>); false when the edge does not serve it.
func (e *Edge) Owner(host string) (appID string, custom, ok bool) {
	if p, ok := e.livePreview(host); ok { // preview.go
		return p.AppID, false, true
	}
	r, ok := e.route(host)
	if !ok {
		return "", false, false
	}
	_, own := e.slugOf(host)
	return r.AppID, !own, true
}

// Secure is the edge over TLS: the same answers, with HSTS for the apps' own hostnames.
type Secure struct{ Edge *Edge }

func (s Secure) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.Edge.slugOf(r.Host); ok {
		w.Header().Set("Strict-Transport-Security", HSTS)
	}
	s.Edge.ServeHTTP(w, r)
}

// Redirect is the edge's plain-HTTP listener once TLS is on: ACME HTTP-01 challenges are
// answered, every other request for a served host is sent to its https:// address with 308
// (method and body kept), and anything else is the edge's plain 404.
type Redirect struct {
	Edge *Edge
	// HTTPSPort is the public port of the TLS listener; 443 is left out of the address.
	HTTPSPort int
	// Challenge answers an HTTP-01 challenge and reports whether it did.
	Challenge func(http.ResponseWriter, *http.Request) bool
}

func (h Redirect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, acmeChallengePath) {
		if h.Challenge != nil && h.Challenge(w, r) {
			return
		}
		h.Edge.ServeHTTP(w, r)
		return
	}
	if !h.Edge.Serves(r.Host) {
		if !h.Edge.servePreview(w, r) { // a removed or unknown preview: 410 or 404 (preview.go)
			notFound(w)
		}
		return
	}
	host := r.Host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		host = hp
	}
	if h.HTTPSPort != 0 && h.HTTPSPort != 443 {
		host = net.JoinHostPort(host, strconv.Itoa(h.HTTPSPort))
	}
	target := "https://" + host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", target)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusPermanentRedirect)
	w.Write([]byte("see " + target + "\n"))
}
