package httpapi_test

import (
	"net/netip"
	"strconv"
	"testing"

	"tori.dev/services/gateway/internal/ratelimit"
)

// An address may collect UnauthorizedBudget 401s in a window; the next request from it that
// needs a token answers 429 without identity being asked, whatever token it carries, while
// other addresses are served as before.
func TestUnauthorizedBudgetPerAddress(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	const guesser = "198.51.100.40"

	for i := range ratelimit.UnauthorizedBudget {
		expect(t, h.do("GET", "/api/apps", "svc_guess"+strconv.Itoa(i), nil, from(guesser)...), 401, "")
	}
	asked := h.up.introspections.Load()
	if asked != ratelimit.UnauthorizedBudget {
		t.Fatalf("identity was asked %d times for %d distinct tokens", asked, ratelimit.UnauthorizedBudget)
	}

	// The 101st: refused before identity, valid token or not.
	limited(t, h.do("GET", "/api/apps", "svc_guess-next", nil, from(guesser)...), "rate_limited", quarterLeft)
	limited(t, h.do("GET", "/api/apps", "svc_alice", nil, from(guesser)...), "rate_limited", quarterLeft)
	if n := h.up.introspections.Load(); n != asked {
		t.Fatalf("identity was asked %d more times after the budget ran out", n-asked)
	}

	// Public routes need no token and stay open; other addresses are unaffected.
	expect(t, h.do("GET", "/api/plans", "", nil, from(guesser)...), 200, "")
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil, from("198.51.100.41")...), 200, "")

	// The window ends and the address is served again.
	h.clk.advance(ratelimit.UnauthorizedWindow)
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil, from(guesser)...), 200, "")
}

// Successful requests never draw on the budget.
func TestValidTokensDoNotSpendTheBudget(t *testing.T) {
	h := start(t, options{})
	for range ratelimit.UnauthorizedBudget + 1 {
		expect(t, h.do("GET", "/api/apps/x", "svc_alice", nil), 200, "")
	}
}
