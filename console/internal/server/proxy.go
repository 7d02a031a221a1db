package server

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"tori.dev/pkg/routepath"
)

// notForwarded are API routes the page must not reach through this server: the two that
// answer a session or token to whoever calls them (the console's server calls verify itself,
// and the page has no use for the command line's token exchange), and logout, which the
// session routes do so that the cookie goes too.
//
// They are matched as the gateway routes them (routepath: any case, one trailing slash), on the
// path as it is forwarded and on its unescaped form, so no spelling of a path the gateway
// would hand to one of them gets through.
var notForwarded = []struct {
	route routepath.Template
	why   string
}{
	{routepath.Parse("/api/auth/magic-link/verify"), "POST /session/verify signs the console in"},
	{routepath.Parse("/api/auth/cli/token"), "the command line's token exchange is not the console's"},
	{routepath.Parse("/api/auth/logout"), "POST /session/logout signs the console out"},
}

// refused is why the console never forwards r's path, if it does not.
func refused(r *http.Request) (string, bool) {
	for _, nf := range notForwarded {
		if nf.route.Matches(r.URL.EscapedPath()) || nf.route.Matches(r.URL.Path) {
			return nf.why, true
		}
	}
	return "", false
}

func newForwarder(h *Handler, base *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
			pr.SetXForwarded()
			pr.Out.Host = base.Host
			// The page's cookie and CSRF token are for this server; the API is bearer-only.
			for _, k := range []string{"Cookie", "Authorization", csrfHeader, "Origin", "Referer"} {
				pr.Out.Header.Del(k)
			}
			if s, ok := sessionOf(pr.In); ok {
				pr.Out.Header.Set("Authorization", "Bearer "+s.Token)
			}
		},
		// Streams (the logs' Server-Sent Events) reach the page as they come.
		FlushInterval: -1,
		ModifyResponse: func(res *http.Response) error {
			res.Header.Del("Set-Cookie")
			// The page and this server share an origin: the API's CORS answer means nothing here.
			for k := range res.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					res.Header.Del(k)
				}
			}
			// The API no longer takes this session (revoked, expired): forget it here too.
			if res.StatusCode == http.StatusUnauthorized {
				if id, ok := sessionIDOf(res.Request); ok {
					h.sessions.Delete(res.Request.Context(), id)
					res.Header.Add("Set-Cookie", (&http.Cookie{Name: h.cookieName(), Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.cfg.SecureCookie, SameSite: http.SameSiteLaxMode}).String())
				}
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The path names the route (slugs, variable keys), never a value or a token.
			slog.WarnContext(r.Context(), "forwarding to the API failed", "method", r.Method, "path", r.URL.Path, "err", err)
			writeError(w, http.StatusBadGateway, "api_unreachable", "the console could not reach the API; try again")
		},
	}
}

// forward answers /api/…: the page's call, checked for its origin and CSRF token when it
// changes something, sent on to the API with the session's bearer token.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request) {
	if why, ok := refused(r); ok {
		writeError(w, http.StatusNotFound, "not_found", why)
		return
	}
	s, id, ok, err := h.session(r)
	if err != nil {
		storeDown(w, r, err)
		return
	}
	if stateChanging(r.Method) {
		if !h.sameOrigin(r) {
			writeError(w, http.StatusForbidden, "forbidden", "state-changing calls are accepted from the console's own page only")
			return
		}
		if ok && !csrfOK(r, s) {
			writeError(w, http.StatusForbidden, "csrf_token_invalid", "the page's CSRF token is missing or stale: reload the page")
			return
		}
	}
	if !ok && id != "" {
		// An unknown or expired cookie: the browser forgets it with this answer.
		h.clearCookie(w)
	}
	if ok {
		r = r.WithContext(withSession(r.Context(), s, id))
	}
	h.forwarder.ServeHTTP(w, r)
}

// clientIP is the TCP peer of r, for X-Forwarded-For on this server's own calls.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	return host
}
