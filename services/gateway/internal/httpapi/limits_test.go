package httpapi_test

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// quarterLeft is what remains of the 15-minute bucket at base (2:30:15): 14m45s.
const quarterLeft = 14*60 + 45

// limited checks a 429: the body the contract gives, Retry-After in whole seconds equal to
// retryAfter, and no X-RateLimit-* header.
func limited(t *testing.T, r response, code string, retryAfter int) {
	t.Helper()
	want := `{"error":"` + code + `","code":"` + code + `","retryAfter":` + strconv.Itoa(retryAfter) +
		`,"retryAfterSeconds":` + strconv.Itoa(retryAfter) + `}`
	expect(t, r, 429, want)
	if got := r.Header.Get("Retry-After"); got != strconv.Itoa(retryAfter) {
		t.Fatalf("Retry-After %q, want %d", got, retryAfter)
	}
	noRateLimitHeaders(t, r)
}

func TestReadsPerOperation600(t *testing.T) {
	h := start(t, options{})
	for i := 1; i <= 600; i++ {
		r := h.do("GET", "/api/apps", "svc_alice", nil)
		if r.Status != 200 {
			t.Fatalf("read %d: %d %s", i, r.Status, r.Body)
		}
		noRateLimitHeaders(t, r)
	}
	before := h.up.count()
	limited(t, h.do("GET", "/api/apps", "svc_alice", nil), "rate_limited", 45)
	if h.up.count() != before {
		t.Fatal("a refused request was forwarded")
	}
	// Another operation, the same operation on another path, and another account each have
	// a window of their own.
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/apps/blue", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/apps", "tok_bob", nil), 200, "")
	// HEAD is a read of the same operation.
	if r := h.do("HEAD", "/api/apps", "svc_alice", nil); r.Status != 429 {
		t.Fatalf("HEAD: %d", r.Status)
	}
}

func TestWritesPerOperation120(t *testing.T) {
	h := start(t, options{})
	for i := 1; i <= 120; i++ {
		if r := h.do("POST", "/api/apps", "svc_alice", strings.NewReader(`{}`)); r.Status != 200 {
			t.Fatalf("write %d: %d %s", i, r.Status, r.Body)
		}
	}
	limited(t, h.do("POST", "/api/apps", "svc_alice", strings.NewReader(`{}`)), "rate_limited", 45)
	// Reads of the same path, and other writes, are not held back.
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil), 200, "")
	expect(t, h.do("PUT", "/api/apps/blue/env", "svc_alice", strings.NewReader(`{"key":"A","value":"b"}`)), 200, "")
	// Operations with a parameter share one window whatever the parameter is.
	for i := 0; i < 120; i++ {
		h.do("DELETE", "/api/apps/app-"+strconv.Itoa(i), "svc_alice", nil)
	}
	limited(t, h.do("DELETE", "/api/apps/another", "svc_alice", nil), "rate_limited", 45)
}

// A 401 counts against no account, even when the token once belonged to one. (It counts
// against its address's 401 budget, so each round comes from an address of its own here.)
func TestUnauthorizedRequestsAreNotCounted(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	for i := 0; i < 130; i++ {
		from := []string{"X-Forwarded-For", "198.51.100." + strconv.Itoa(i)}
		expect(t, h.do("POST", "/api/apps", "tok_expired", nil, from...), 401, "")
		expect(t, h.do("POST", "/api/apps", "svc_nobody", nil, from...), 401, "")
		expect(t, h.do("POST", "/api/apps", "", nil, from...), 401, "")
	}
	for i := 1; i <= 120; i++ {
		if r := h.do("POST", "/api/apps", "svc_alice", nil); r.Status != 200 {
			t.Fatalf("write %d after 401s: %d", i, r.Status)
		}
	}
	limited(t, h.do("POST", "/api/apps", "svc_alice", nil), "rate_limited", 45)
}

func TestAuthRoutesHavePerAddressBuckets(t *testing.T) {
	// The harness's client connects from 127.0.0.1, trusted here as a proxy, so the
	// X-Forwarded-For address is the client.
	h := start(t, options{authLimit: 3, trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	for i := 0; i < 3; i++ {
		expect(t, h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`), from("198.51.100.5")...), 200, "")
	}
	limited(t, h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`), from("198.51.100.5")...), "rate_limited", quarterLeft)
	// Addresses left of the right-most untrusted one are the client's own claim.
	limited(t, h.do("POST", "/api/auth/magic-link", "", nil, from("203.0.113.1, 198.51.100.5")...), "rate_limited", quarterLeft)

	expect(t, h.do("POST", "/api/auth/magic-link/verify", "", nil, from("198.51.100.5")...), 200, "")
	expect(t, h.do("POST", "/api/auth/magic-link", "", nil, from("198.51.100.6")...), 200, "")

	// Authenticated auth routes have buckets too, counted before the token is checked.
	for i := 0; i < 3; i++ {
		expect(t, h.do("POST", "/api/auth/logout", "svc_nobody", nil, from("198.51.100.7")...), 401, "")
	}
	limited(t, h.do("POST", "/api/auth/logout", "tok_bob", nil, from("198.51.100.7")...), "rate_limited", quarterLeft)
}

func TestUntrustedPeerCannotChooseItsAddress(t *testing.T) {
	h := start(t, options{authLimit: 2})
	for i := 0; i < 2; i++ {
		expect(t, h.do("POST", "/api/auth/cli/device", "", nil, "X-Forwarded-For", "198.51.100."+strconv.Itoa(i)), 200, "")
	}
	limited(t, h.do("POST", "/api/auth/cli/device", "", nil, "X-Forwarded-For", "198.51.100.99"), "rate_limited", quarterLeft)
}

func TestTokenExchangeCountsOnlyFlaggedAnswersAndSlowsDown(t *testing.T) {
	h := start(t, options{authLimit: 2})
	poll := func(code string) response {
		return h.do("POST", "/api/auth/cli/token", "", strings.NewReader(`{"deviceCode":"`+code+`"}`))
	}
	// A client polling its pending code is never locked out.
	for i := 0; i < 10; i++ {
		expect(t, poll("pending"), 400, `{"error":"authorization_pending"}`)
	}
	// Unknown codes count; identity's flag never reaches the client.
	for i := 0; i < 2; i++ {
		r := poll("unknown")
		expect(t, r, 400, `{"error":"invalid_grant"}`)
		if r.Header.Get("X-Tori-Count-Bucket") != "" {
			t.Fatal("internal header leaked")
		}
	}
	before := h.up.count()
	limited(t, poll("pending"), "slow_down", quarterLeft)
	if h.up.count() != before {
		t.Fatal("a request over the bucket was forwarded")
	}
}

func TestRefusalsCarryCORSForAllowedOrigins(t *testing.T) {
	h := start(t, options{authLimit: 1})
	expect(t, h.do("POST", "/api/auth/magic-link", "", nil, "Origin", consoleOrigin), 200, "")
	r := h.do("POST", "/api/auth/magic-link", "", nil, "Origin", consoleOrigin)
	if r.Status != 429 || r.Header.Get("Access-Control-Allow-Origin") != consoleOrigin {
		t.Fatalf("429 without CORS: %d %v", r.Status, r.Header)
	}
	r = h.do("GET", "/api/account", "", nil, "Origin", consoleOrigin)
	if r.Status != 401 || r.Header.Get("Access-Control-Allow-Origin") != consoleOrigin {
		t.Fatalf("401 without CORS: %d %v", r.Status, r.Header)
	}
}

// Every public route but the probes has a per-address minute window (PublicPerMinute), so a
// flood of requests that need no token is cut off at its own address: 600 pass, the 601st
// is 429 (slow_down on the token exchange, as RFC 8628 pollers expect), another address is
// untouched, and /healthz and /readyz are never limited.
func TestPublicRoutesHaveAPerAddressWindow(t *testing.T) {
	h := start(t, options{authLimit: 100000, trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	for _, rt := range []struct {
		method, path, body, code string
	}{
		{"GET", "/api/plans", "", "rate_limited"},
		{"GET", "/api/openapi.json", "", "rate_limited"},
		{"POST", "/api/billing/webhook", `{}`, "rate_limited"},
		{"POST", "/api/auth/cli/token", `{"deviceCode":"pending"}`, "slow_down"},
		{"POST", "/api/auth/magic-link", `{}`, "rate_limited"},
	} {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			do := func(addr string) response {
				var body *strings.Reader
				if rt.body != "" {
					body = strings.NewReader(rt.body)
					return h.do(rt.method, rt.path, "", body, from(addr)...)
				}
				return h.do(rt.method, rt.path, "", nil, from(addr)...)
			}
			flooder := "198.51.100.9" + strconv.Itoa(len(rt.path)%10)
			for i := 1; i <= 600; i++ {
				if r := do(flooder); r.Status == 429 {
					t.Fatalf("request %d refused: %s", i, r.Body)
				}
			}
			limited(t, do(flooder), rt.code, 45)
			if r := do("203.0.113.7"); r.Status == 429 {
				t.Fatalf("another address: %d %s", r.Status, r.Body)
			}
		})
	}
	for range 700 {
		expect(t, h.do("GET", "/healthz", "", nil, from("198.51.100.99")...), 200, "")
	}
	if r := h.do("GET", "/readyz", "", nil, from("198.51.100.99")...); r.Status == 429 {
		t.Fatalf("/readyz limited: %s", r.Body)
	}
}

// An IPv6 client is one /64: addresses of the same /64 fill one bucket, and another /64 is
// untouched. Without it, a client with a /64 would have 2^64 buckets.
func TestIPv6AddressesShareTheirSlash64sBucket(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	for i := 1; i <= 20; i++ {
		r := h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`), from("2001:db8:5:6::"+strconv.FormatInt(int64(i), 16))...)
		if r.Status == 429 {
			t.Fatalf("request %d refused", i)
		}
	}
	limited(t, h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`), from("2001:db8:5:6:abcd:1234:5678:9abc")...), "rate_limited", quarterLeft)
	if r := h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`), from("2001:db8:5:7::1")...); r.Status == 429 {
		t.Fatalf("another /64: %d %s", r.Status, r.Body)
	}
}
