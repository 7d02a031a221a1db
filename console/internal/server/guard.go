package server

import (
	"crypto/subtle"
	"net/http"
)

// csrfHeader carries the session's CSRF token on every state-changing call (a synchronizer
// token: the page reads it from GET /session, same-origin only).
const csrfHeader = "X-CSRF-Token"

func stateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// sameOrigin refuses a state-changing request that another site's page sent: its Origin is
// not the console's, or the browser says it crossed sites. A request without either header
// (not from a browser) is left to the CSRF token.
func (h *Handler) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && o != h.cfg.Origin {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// csrfOK reports whether r echoes s's CSRF token.
func csrfOK(r *http.Request, s Session) bool {
	got := r.Header.Get(csrfHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}
