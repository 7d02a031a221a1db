package httpapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
)

const verifier = "M25iVXpKU3puUjFaYWg3T1NDTDQtcW1ROUY5YXlwalNoc0hhakxifmZHag"

func challenge(v string) string {
	s := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

const redirect = "http://127.0.0.1:53682/callback"

func (h *harness) authorize(caller any, body map[string]string) response {
	h.t.Helper()
	return h.do("POST", "/api/auth/cli/authorize", body, h.asCaller(caller))
}

func authorizeBody() map[string]string {
	return map[string]string{"redirectUri": redirect, "state": "xyz 1", "codeChallenge": challenge(verifier), "codeChallengeMethod": "S256"}
}

// codeFrom authorizes and returns the code from redirectTo.
func (h *harness) codeFrom(caller any) string {
	h.t.Helper()
	r := h.authorize(caller, authorizeBody())
	h.expect(r, 200, "")
	m := r.json(h.t)
	if keys(m) != "redirectTo" {
		h.t.Fatalf("authorize shape %s", keys(m))
	}
	u, err := url.Parse(m["redirectTo"].(string))
	if err != nil || u.Scheme+"://"+u.Host+u.Path != redirect || u.Query().Get("state") != "xyz 1" || u.Query().Get("code") == "" {
		h.t.Fatalf("redirectTo %v", m["redirectTo"])
	}
	return u.Query().Get("code")
}

func (h *harness) exchange(code, v, uri string) response {
	h.t.Helper()
	return h.do("POST", "/api/auth/cli/token", map[string]string{"code": code, "codeVerifier": v, "redirectUri": uri}, anonymous)
}

func TestLoopbackFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, session := h.signIn("ada@example.com")
	apiTok := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, session).json(t)["token"].(string)

	h.expect(h.authorize(apiTok, authorizeBody()), 403, "session_required")

	for _, uri := range []string{"https://127.0.0.1:53682/callback", "http://evil.example:53682/cb", "http://127.0.0.1/cb", "http://127.0.0.1:53682@evil.example/cb", ""} {
		b := authorizeBody()
		b["redirectUri"] = uri
		h.expect(h.authorize(session, b), 400, "invalid_redirect_uri")
	}
	for field, value := range map[string]string{"codeChallengeMethod": "plain", "codeChallenge": "short", "state": ""} {
		b := authorizeBody()
		b[field] = value
		h.expect(h.authorize(session, b), 400, "invalid_request")
	}
	for _, uri := range []string{"http://[::1]:53682/callback", "http://localhost:53682/"} {
		b := authorizeBody()
		b["redirectUri"] = uri
		h.expect(h.authorize(session, b), 200, "")
	}

	// The good path, once only.
	code := h.codeFrom(session)
	r := h.exchange(code, verifier, redirect)
	h.expect(r, 200, "")
	tok := r.json(t)
	if keys(tok) != "token,tokenId" || !strings.HasPrefix(tok["token"].(string), "svc_") {
		t.Fatalf("token answer %v", tok)
	}
	if c := h.callerOf(tok["token"].(string)); c.AccountID != session.AccountID || c.TokenKind != "api" {
		t.Fatalf("minted token acts for %+v", c)
	}
	r = h.exchange(code, verifier, redirect)
	h.expect(r, 400, "invalid_grant")
	if r.header.Get(bucketHeader) != "" {
		t.Fatal("a known (spent) code must not count against the address")
	}

	// A wrong verifier fails and spends the code.
	code = h.codeFrom(session)
	h.expect(h.exchange(code, strings.Repeat("a", 43), redirect), 400, "invalid_grant")
	h.expect(h.exchange(code, verifier, redirect), 400, "invalid_grant")

	// So does another redirect URI.
	code = h.codeFrom(session)
	h.expect(h.exchange(code, verifier, "http://127.0.0.1:1/callback"), 400, "invalid_grant")

	// Codes are short-lived.
	code = h.codeFrom(session)
	h.clock.Advance(2 * time.Minute)
	h.expect(h.exchange(code, verifier, redirect), 400, "expired_token")

	// An unknown code is invalid_grant and counts against the address.
	r = h.exchange("nope", verifier, redirect)
	h.expect(r, 400, "invalid_grant")
	if r.header.Get(bucketHeader) != "1" {
		t.Fatal("an unknown code must count against the address")
	}
}

// asCaller accepts a caller or a token to introspect.
func (h *harness) asCaller(c any) *callerid.Caller {
	if tok, ok := c.(string); ok {
		return h.callerOf(tok)
	}
	return c.(*callerid.Caller)
}
