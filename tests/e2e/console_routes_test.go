package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// The console server never hands page script the API session a sign-in code is exchanged
// for: its route list is matched as the gateway routes (any case, one trailing slash), so no
// spelling of /api/auth/magic-link/verify is forwarded, and the code stays unspent for the
// console's own sign-in (POST /session/verify).
func TestConsoleForwardsNoSpellingOfTheSignInExchange(t *testing.T) {
	s := defaultStack(t)
	consoleURL := s.StartConsole(t)
	code := s.MagicCode(t, harness.Email("console-routes"))
	post := func(path string) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"token": code})
		req, _ := http.NewRequest(http.MethodPost, consoleURL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", consoleURL) // as the page's own fetch sends it
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{
		"/api/auth/magic-link/verify",
		"/api/auth/magic-link/verify/",
		"/api/AUTH/Magic-Link/VERIFY",
		"/api/auth/magic-link/VERIFY/",
	} {
		status, body := post(path)
		if strings.Contains(body, "tok_") {
			t.Fatalf("POST %s handed the page an API session: %d", path, status)
		}
		if status != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
			t.Fatalf("POST %s: %d %s, want 404 not_found", path, status, body)
		}
	}
	if status, body := post("/session/verify"); status != http.StatusOK || strings.Contains(body, "tok_") {
		t.Fatalf("the console's own sign-in with the unspent code: %d %s", status, body)
	}
}
