package httpapi_test

import (
	"net/netip"
	"strconv"
	"testing"

	"tori.dev/services/gateway/internal/ratelimit"
)

// An address may collect UnauthorizedBudget 401s in a window. After that its refused tokens
// answer 429 (a token refused before without identity being asked), while a valid token from
// the same address, cached or never seen, is served: the budget is spent by bad tokens and
// only ever refuses bad tokens.
func TestUnauthorizedBudgetPerAddress(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, cache: true})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	const guesser = "198.51.100.40"

	// A valid token used from the address before the guessing starts, so it is cached.
	expect(t, h.do("GET", "/api/apps", "tok_bob", nil, from(guesser)...), 200, "")
	for i := range ratelimit.UnauthorizedBudget {
		expect(t, h.do("GET", "/api/apps", "svc_guess"+strconv.Itoa(i), nil, from(guesser)...), 401, "")
	}
	asked := h.up.introspections.Load()
	if asked != ratelimit.UnauthorizedBudget+1 {
		t.Fatalf("identity was asked %d times for %d distinct tokens", asked, ratelimit.UnauthorizedBudget+1)
	}

	// Past the budget: a token refused before is 429 without asking identity again.
	limited(t, h.do("GET", "/api/apps", "svc_guess0", nil, from(guesser)...), "rate_limited", quarterLeft)
	if n := h.up.introspections.Load(); n != asked {
		t.Fatalf("identity was asked %d more times for a token it refused before", n-asked)
	}
	// A token never seen is still checked: bad, 429; valid, served.
	limited(t, h.do("GET", "/api/apps", "svc_guess-next", nil, from(guesser)...), "rate_limited", quarterLeft)
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil, from(guesser)...), 200, "")
	// The cached token is served too, on every kind of route.
	expect(t, h.do("GET", "/api/apps", "tok_bob", nil, from(guesser)...), 200, "")
	expect(t, h.do("POST", "/api/apps", "tok_bob", nil, from(guesser)...), 200, "")
	expect(t, h.do("GET", "/api/account", "svc_alice", nil, from(guesser)...), 200, "")
	// No Authorization at all is a refused token as well.
	limited(t, h.do("GET", "/api/apps", "", nil, from(guesser)...), "rate_limited", quarterLeft)

	// Public routes need no token and stay open; other addresses are unaffected.
	expect(t, h.do("GET", "/api/plans", "", nil, from(guesser)...), 200, "")
	expect(t, h.do("GET", "/api/apps", "svc_guess1", nil, from("198.51.100.41")...), 401, "")

	// The window ends and bad tokens are plain 401 again.
	h.clk.advance(ratelimit.UnauthorizedWindow)
	expect(t, h.do("GET", "/api/apps", "svc_guess-later", nil, from(guesser)...), 401, "")
}

// Successful requests never draw on the budget.
func TestValidTokensDoNotSpendTheBudget(t *testing.T) {
	h := start(t, options{})
	for range ratelimit.UnauthorizedBudget + 1 {
		expect(t, h.do("GET", "/api/apps/x", "svc_alice", nil), 200, "")
	}
}

// A logout or a token revocation that succeeds through the gateway drops the token from its
// cache before the answer: the next request with it is introspected again (and identity,
// having revoked it, refuses it), with no event needed.
func TestRevocationThroughTheGatewayEvictsAtOnce(t *testing.T) {
	h := start(t, options{cache: true, accounts: true})
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	asked := h.up.introspections.Load()
	if asked != 1 {
		t.Fatalf("introspected %d times, want the cache to answer the second", asked)
	}
	expect(t, h.do("POST", "/api/auth/logout", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil), 200, "")
	if n := h.up.introspections.Load(); n != asked+1 {
		t.Fatalf("introspected %d times after logout, want the token asked about again", n-asked)
	}
	reads := h.up.accountReads.Load()
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	if h.up.accountReads.Load() != reads+1 {
		t.Fatal("the account copy outlived the logout")
	}

	// DELETE /api/tokens/{id} drops the token with that id, not the caller's.
	expect(t, h.do("GET", "/api/apps", "tok_bob", nil), 200, "")
	asked = h.up.introspections.Load()
	expect(t, h.do("DELETE", "/api/tokens/t-bob", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/apps", "tok_bob", nil), 200, "")
	if n := h.up.introspections.Load(); n != asked+1 {
		t.Fatalf("introspected %d times after the revocation, want tok_bob asked about again", n-asked)
	}
}
