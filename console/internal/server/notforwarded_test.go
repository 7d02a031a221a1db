package server

import (
	"strings"
	"testing"
)

// The routes the console never forwards are refused in every spelling the gateway would route
// to them (any case, one trailing slash, an escaped letter), not only the exact path: a page
// script posting to /api/auth/magic-link/verify/ must not reach identity's verify through the
// console any more than with the exact path.
func TestNeverForwardedRoutesAreRefusedInEverySpellingTheGatewayRoutes(t *testing.T) {
	h, api := sessionHandler(t, "memory")
	cookie, csrf := signIn(t, h)
	own := map[string]string{"Origin": "http://127.0.0.1:5173", csrfHeader: csrf}
	for _, route := range []string{"/api/auth/magic-link/verify", "/api/auth/cli/token", "/api/auth/logout"} {
		upper := "/api" + strings.ToUpper(strings.TrimPrefix(route, "/api"))
		for _, path := range []string{
			route,
			route + "/",
			upper,
			upper + "/",
			strings.Replace(route, "auth", "Auth", 1),
			strings.Replace(route, "/auth/", "/%61uth/", 1),
		} {
			before := len(api.paths)
			w := do(h, call{method: "POST", path: path, cookie: cookie, headers: own, body: `{"token":"good"}`})
			if w.Code != 404 || !strings.Contains(w.Body.String(), `"not_found"`) {
				t.Errorf("POST %s: %d %s, want 404 not_found", path, w.Code, w.Body)
			}
			if len(api.paths) > before {
				t.Errorf("POST %s reached the API as %s", path, api.paths[len(api.paths)-1])
			}
		}
	}
	// Paths the gateway routes elsewhere are forwarded as before.
	for _, path := range []string{"/api/auth/magic-link/verify/x", "/api/auth/magic-link", "/api/auth/logouts"} {
		before := len(api.paths)
		do(h, call{method: "POST", path: path, cookie: cookie, headers: own, body: `{}`})
		if len(api.paths) != before+1 {
			t.Errorf("POST %s was not forwarded", path)
		}
	}
}
