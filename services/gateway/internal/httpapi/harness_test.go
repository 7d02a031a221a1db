package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/gateway/internal/accountview"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/clientip"
	"tori.dev/services/gateway/internal/cors"
	"tori.dev/services/gateway/internal/httpapi"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/logstreams"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
	"tori.dev/services/gateway/internal/readiness"
)

var key = []byte("test-signing-key-0123456789")

const (
	consoleOrigin = "http://127.0.0.1:5173"
	openAPIDoc    = `{"openapi":"3.1.0","info":{"title":"t","version":"1.0.0"},"paths":{}}`
)

// base is 15 seconds into a minute: a per-account window has 45 seconds left.
var base = time.Date(2026, 11, 22, 2, 30, 15, 0, time.UTC)

// seen is one request as the upstream received it.
type seen struct {
	Method, RequestURI string
	Header             http.Header
	Caller             callerid.Caller
	ContentLength      int64
	TransferEncoding   []string
}

// upstream plays every service at once: it checks the gateway's signature as a service does,
// records what it received, and answers according to the path.
type upstream struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []seen
	bytesIn  atomic.Int64

	// credentials counts requests of any kind (introspection and probes included) that
	// reached a service with an Authorization or Cookie header: always 0.
	credentials atomic.Int64
	// introspections counts token checks identity was asked for.
	introspections atomic.Int64

	// accountReads counts GET /api/account that reached identity; accountVersion is what
	// identity answers there, advanced by each PATCH /api/account.
	accountReads   atomic.Int64
	accountVersion atomic.Int64
	accountStatus  atomic.Int64 // when set, GET /api/account answers this status

	readyProbes atomic.Int64
	acted       atomic.Int64  // POSTs with ?status= that reached the service
	hold        chan struct{} // a POST with ?hold= waits until this is closed
}

func (u *upstream) last(t *testing.T) seen {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		t.Fatal("upstream received nothing")
	}
	return u.requests[len(u.requests)-1]
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

var introspections = map[string]auth.Introspection{
	"svc_alice":   {AccountID: "acct-a", UserID: "user-a", TokenKind: "api", TokenID: "t-alice"},
	"tok_alice":   {AccountID: "acct-a", UserID: "user-a", TokenKind: "session", TokenID: "t-alice-session", ExpiresAt: ptr(time.Now().Add(time.Hour))},
	"tok_bob":     {AccountID: "acct-b", UserID: "user-b", TokenKind: "session", TokenID: "t-bob", ExpiresAt: ptr(time.Now().Add(time.Hour))},
	"tok_expired": {AccountID: "acct-a", UserID: "user-a", TokenKind: "session", TokenID: "t-old", ExpiresAt: ptr(time.Now().Add(-time.Minute))},
	// A deploy token of Carol's pinned to two apps of team acme, and Carol's session.
	"svc_carol_deploy": {AccountID: "acct-c", UserID: "user-c", TokenKind: "api", TokenID: "t-carol-deploy", ExpiresAt: ptr(time.Now().Add(time.Hour)),
		Teams: []auth.TeamRole{{ID: "team-acme", Slug: "acme", Role: "developer"}}, Scope: "deploy", Apps: []string{"web", "api"}},
	"svc_carol": {AccountID: "acct-c", UserID: "user-c", TokenKind: "api", TokenID: "t-carol-full",
		Teams: []auth.TeamRole{{ID: "acct-c", Slug: "carol", Role: "owner", Personal: true}, {ID: "team-acme", Slug: "acme", Role: "developer"}}},
	"tok_carol": {AccountID: "acct-c", UserID: "user-c", TokenKind: "session", TokenID: "t-carol", ExpiresAt: ptr(time.Now().Add(time.Hour)),
		Teams: []auth.TeamRole{{ID: "acct-c", Slug: "carol", Role: "owner", Personal: true}, {ID: "team-acme", Slug: "acme", Role: "developer"}}},
}

// expiredTokens are API tokens identity reports past their end.
var expiredTokens = map[string]bool{"svc_expired": true}

func ptr[T any](v T) *T { return &v }

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.Header.Values("Authorization")) > 0 || len(r.Header.Values("Cookie")) > 0 {
		u.credentials.Add(1)
	}
	if r.URL.Path == "/readyz" { // unsigned, as every service's is
		u.readyProbes.Add(1)
		_, _ = io.WriteString(w, `{"ready":true}`)
		return
	}
	caller, err := callerid.Verify(key, r.Header.Get, r.Method, r.Host, r.RequestURI, time.Now())
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"unsigned"}`)
		return
	}
	if r.URL.Path == auth.IntrospectPath {
		u.introspections.Add(1)
		var req struct{ Token string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		in, ok := introspections[req.Token]
		if strings.HasPrefix(req.Token, "svc_bench_") { // any number of accounts, for benchmarks
			in, ok = auth.Introspection{AccountID: req.Token, UserID: req.Token, TokenKind: "api", TokenID: req.Token}, true
		}
		if !ok {
			w.Header().Set(auth.TokenUnknownHeader, "1")
			if expiredTokens[req.Token] {
				w.Header().Set(auth.TokenExpiredHeader, "1")
			}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(in)
		return
	}
	u.mu.Lock()
	u.requests = append(u.requests, seen{Method: r.Method, RequestURI: r.RequestURI, Header: r.Header.Clone(), Caller: caller,
		ContentLength: r.ContentLength, TransferEncoding: r.TransferEncoding})
	u.mu.Unlock()

	if q := r.URL.Query(); r.Method == http.MethodPost && q.Get("status") != "" {
		// An action: each one answers differently, so a repeated answer is told from a new one.
		n := u.acted.Add(1)
		if q.Get("hold") != "" {
			<-u.hold
		}
		body, _ := io.ReadAll(r.Body)
		status, _ := strconv.Atoi(q.Get("status"))
		size, _ := strconv.ParseInt(q.Get("size"), 10, 64)
		w.Header().Set("Content-Type", "application/vnd.test+json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"n":%d,"bytes":%d,"account":%q}`, n, len(body), caller.AccountID)
		_, _ = io.Copy(w, io.LimitReader(filler{}, size))
		return
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Query().Get("refuse") != "":
		// A service refusing a change (any method): nothing happened.
		status, _ := strconv.Atoi(r.URL.Query().Get("refuse"))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":"refused"}`)
	case r.URL.Path == "/api/account":
		if r.Method == http.MethodPatch {
			u.accountVersion.Add(1)
		} else {
			u.accountReads.Add(1)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if status := u.accountStatus.Load(); status != 0 && r.Method == http.MethodGet {
			w.WriteHeader(int(status))
		}
		_, _ = fmt.Fprintf(w, `{"account":%q,"version":%d,"query":%q}`, caller.AccountID, u.accountVersion.Load(), r.URL.RawQuery)
	case r.URL.Path == "/api/auth/cli/token":
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte("unknown")) {
			w.Header().Set(proxy.CountBucketHeader, "1")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"authorization_pending"}`)
	case len(segs) == 4 && segs[3] == "deploys" && r.Method == http.MethodPost && segs[2] == "early":
		// Answers before reading the body, as a service refusing an upload does.
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"error":"upload_too_large"}`)
	case len(segs) == 4 && segs[3] == "deploys" && r.Method == http.MethodPost:
		n, err := io.Copy(io.Discard, r.Body)
		u.bytesIn.Add(n)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"bytes":`+strconv.FormatInt(n, 10)+`}`)
	case len(segs) == 4 && segs[3] == "logs" && r.URL.Query().Get("bytes") != "":
		n, _ := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		if r.URL.Query().Get("known") != "" {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		_, _ = io.Copy(w, io.LimitReader(filler{}, n))
	default:
		// Headers no client may see: internal ones, rate-limit ones, and CORS decisions that
		// belong to the gateway.
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-Ratelimit-Remaining", "99")
		w.Header().Set("X-Tori-Internal", "secret")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "account": caller.AccountID})
	}
}

// filler is an endless body that costs no memory.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// trust stands in for the revocation listener's verdict on the token cache.
type trust bool

func (t trust) Trusted(time.Time) bool { return bool(t) }

type options struct {
	authLimit int
	trusted   []netip.Prefix
	down      []string          // owners whose service is not running
	override  map[string]string // owner -> base URL of another upstream
	cache     bool              // trust the token cache, as a connected instance does
	accounts  bool              // keep identity's GET /api/account answers (trusted as cache)
	timeouts  httpapi.Timeouts
	maxConns  int
	streams   *logstreams.Registry // nil: log streams forwarded like any answer
}

type harness struct {
	t      testing.TB
	url    string
	up     *upstream
	logs   *testinfra.LogBuffer
	client *http.Client
	clk    *clock
	views  *accountview.Cache // nil unless options.accounts
}

func start(t testing.TB, o options) *harness {
	t.Helper()
	if o.authLimit == 0 {
		o.authLimit = 20
	}
	up := &upstream{hold: make(chan struct{})}
	up.srv = httptest.NewServer(up)
	t.Cleanup(up.srv.Close)

	// A port nothing listens on, for services that are down.
	deadURL := "http://" + testinfra.FreeAddr(t)

	upstreams := map[string]string{}
	for _, owner := range []string{"identity", "billing", "apps", "deploys", "logs", "databases"} {
		upstreams[owner] = up.srv.URL
	}
	for _, owner := range o.down {
		upstreams[owner] = deadURL
	}
	introspect := upstreams["identity"] // tokens are checked by the fake even when identity's routes go elsewhere
	for owner, u := range o.override {
		upstreams[owner] = u
	}

	logs := &testinfra.LogBuffer{}
	log := logging.New("gateway", logs)
	transport := proxy.NewTransport()
	t.Cleanup(transport.CloseIdleConnections)
	clk := &clock{t: base}
	keys := idempotency.NewMemory(clk.now)
	var accounts *httpapi.AccountViews
	if o.accounts {
		accounts = &httpapi.AccountViews{Cache: accountview.New(time.Minute), Trusted: trust(o.cache).Trusted}
	}
	tokens := auth.NewCache()
	app := httpapi.New(httpapi.Deps{
		Log:       log,
		Identity:  health.NewIdentity("gateway", "test"),
		OpenAPI:   []byte(openAPIDoc),
		Upstreams: upstreams,
		Auth:      auth.NewAuthenticator(auth.NewIdentityClient(introspect, key, transport), tokens, trust(o.cache), time.Minute),
		Limits:    ratelimit.NewPolicy(ratelimit.NewMemory(clk.now), o.authLimit, log),
		ClientIP:  clientip.New(o.trusted),
		CORS:      cors.New([]string{consoleOrigin}),
		Proxy:     proxy.New(transport, key, httpapi.MaxBody),
		Ready:     readiness.New(transport, upstreams, time.Second),

		Tokens:      tokens,
		Accounts:    accounts,
		Idempotency: keys,
		Timeouts:    o.timeouts,
		Streams:     o.streams,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.maxConns == 0 {
		o.maxConns = 256
	}
	ln = httpapi.Listen(ln, o.maxConns)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(2 * time.Second) })

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	h := &harness{t: t, url: "http://" + ln.Addr().String(), up: up, logs: logs, client: client, clk: clk}
	if accounts != nil {
		h.views = accounts.Cache
	}
	return h
}

// response is a finished exchange with the gateway.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return m
}

func (h *harness) do(method, path, token string, body io.Reader, headers ...string) response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, h.url+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.Close {
		resp.Header.Set("Connection", "close") // net/http moves it out of Header
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func expect(t *testing.T, r response, status int, body string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if body != "" && strings.TrimSpace(string(r.Body)) != body {
		t.Fatalf("body %s, want %s", r.Body, body)
	}
}

// noRateLimitHeaders fails on any X-RateLimit-* header, in any spelling.
func noRateLimitHeaders(t *testing.T, r response) {
	t.Helper()
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
			t.Fatalf("response carries %s", k)
		}
	}
}
