package httpapi_test

import (
	"fmt"
	"testing"

	"tori.dev/services/identity/internal/auth"
)

// The 100th API token is minted, the 101st is refused with the cap and the plan; revoking one
// makes room again.
func TestAPITokenCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	var last string
	for i := 1; i <= auth.MaxAPITokens; i++ {
		r := h.do("POST", "/api/tokens", map[string]string{"name": fmt.Sprintf("t%d", i)}, ada)
		h.expect(r, 201, "")
		last = r.json(t)["id"].(string)
	}
	m := h.expect(h.do("POST", "/api/tokens", map[string]string{"name": "one too many"}, ada), 403, "token_limit_reached")
	if m["code"] != "token_limit_reached" || m["limit"] != float64(100) || m["plan"] != "nestling" {
		t.Fatalf("101st token answer %v, want code, limit 100 and plan nestling", m)
	}
	if n := len(h.do("GET", "/api/tokens", nil, ada).list(t)); n != auth.MaxAPITokens {
		t.Fatalf("%d tokens listed after the refusal, want %d", n, auth.MaxAPITokens)
	}
	h.expect(h.do("DELETE", "/api/tokens/"+last, nil, ada), 204, "")
	h.expect(h.do("POST", "/api/tokens", map[string]string{"name": "room again"}, ada), 201, "")
	// The cap is the account's own.
	_, bob := h.signIn("bob@example.com")
	h.expect(h.do("POST", "/api/tokens", map[string]string{"name": "bob's"}, bob), 201, "")
}

// Five sign-in mails go to one address in 15 minutes; the sixth request is answered the same
// and sends nothing; once the window has moved on, mail flows again. Other addresses are not
// held back.
func TestMagicLinkMailCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sent := func() int {
		h.mailer.mu.Lock()
		defer h.mailer.mu.Unlock()
		return len(h.mailer.msgs)
	}
	for i := 1; i <= auth.MagicLinksPerWindow; i++ {
		h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": "flood@example.com"}, anonymous), 202, "")
		if got := sent(); got != i {
			t.Fatalf("after request %d, %d mails sent", i, got)
		}
	}
	r := h.do("POST", "/api/auth/magic-link", map[string]string{"email": "flood@example.com"}, anonymous)
	h.expect(r, 202, "")
	if string(r.body) != `{"ok":true}` {
		t.Fatalf("withheld answer %s, want the usual one", r.body)
	}
	if got := sent(); got != auth.MagicLinksPerWindow {
		t.Fatalf("the 6th request sent mail: %d mails", got)
	}
	h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": "other@example.com"}, anonymous), 202, "")
	if got := sent(); got != auth.MagicLinksPerWindow+1 {
		t.Fatalf("another address was held back: %d mails", got)
	}
	h.clock.Advance(auth.MagicLinkWindow)
	h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": "flood@example.com"}, anonymous), 202, "")
	if got := sent(); got != auth.MagicLinksPerWindow+2 {
		t.Fatalf("no mail once the window moved on: %d mails", got)
	}
}
