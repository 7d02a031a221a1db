package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/redis/go-redis/v9"
)

// fakeAPI plays the public API's few routes the console's server touches, and records what
// reached it.
type fakeAPI struct {
	mu      sync.Mutex
	revoked map[string]bool
	seen    []http.Header
	paths   []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Header.Clone())
	f.paths = append(f.paths, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	auth := r.Header.Get("Authorization")
	switch {
	case r.URL.Path == "/api/auth/magic-link/verify":
		var in struct{ Token string }
		json.NewDecoder(r.Body).Decode(&in)
		if in.Token != "good" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_token","message":"the link is used or expired"}`)
			return
		}
		io.WriteString(w, `{"token":"tok_secret","expiresAt":"2099-01-01T00:00:00.000Z","user":{"id":"u1","email":"a@example.com"}}`)
	case r.URL.Path == "/api/auth/logout":
		f.mu.Lock()
		f.revoked[strings.TrimPrefix(auth, "Bearer ")] = true
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case auth == "Bearer tok_secret" && !f.isRevoked("tok_secret"):
		w.Header().Set("Access-Control-Allow-Origin", "*")
		io.WriteString(w, `{"ok":true,"path":"`+r.URL.Path+`"}`)
	default:
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"unauthorized"}`)
	}
}

func (f *fakeAPI) isRevoked(t string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.revoked[t]
}

func (f *fakeAPI) last() (string, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[len(f.paths)-1], f.seen[len(f.seen)-1]
}

// stores are the session stores every session test runs against.
var stores = []string{"memory", "redis"}

func redisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		t.Fatal("TEST_REDIS_URL is not set (the Makefile exports it: redis://127.0.0.1:6379/0)")
	}
	return u
}

func sessionHandler(t *testing.T, store string) (*Handler, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{revoked: map[string]bool{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return handlerFor(t, store, srv.URL), api
}

func handlerFor(t *testing.T, store, base string) *Handler {
	t.Helper()
	env := map[string]string{"BASE_URL": base, "CONSOLE_URL": "http://127.0.0.1:5173", "CONSOLE_SESSION_STORE": store}
	if store == "redis" {
		env["REDIS_URL"] = redisURL(t)
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, fstest.MapFS{"index.html": {Data: []byte("<title>app</title>")}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type call struct {
	method, path, body string
	cookie             *http.Cookie
	headers            map[string]string
}

func do(h http.Handler, c call) *httptest.ResponseRecorder {
	r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.cookie != nil {
		r.AddCookie(c.cookie)
	}
	for k, v := range c.headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// signIn verifies the magic link's code and answers the cookie and the CSRF token.
func signIn(t *testing.T, h http.Handler) (*http.Cookie, string) {
	t.Helper()
	w := do(h, call{method: "POST", path: "/session/verify", body: `{"token":"good"}`, headers: map[string]string{"Origin": "http://127.0.0.1:5173"}})
	if w.Code != 200 {
		t.Fatalf("verify: %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "tok_secret") {
		t.Fatalf("verify answered the API token to the page: %s", w.Body)
	}
	res := w.Result()
	if len(res.Cookies()) != 1 {
		t.Fatalf("verify set %d cookies", len(res.Cookies()))
	}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" || c.Name != "tori_console" {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Lax, path /, not Secure on loopback", c)
	}
	if strings.Contains(c.Value, "tok_") {
		t.Fatal("the cookie holds the API token")
	}
	var v struct{ CSRFToken string }
	json.Unmarshal(w.Body.Bytes(), &v)
	if len(v.CSRFToken) < 32 {
		t.Fatalf("csrf token %q", v.CSRFToken)
	}
	return &http.Cookie{Name: c.Name, Value: c.Value}, v.CSRFToken
}

func TestSessionSignInForwardsWithBearer(t *testing.T) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			h, api := sessionHandler(t, store)
			cookie, csrf := signIn(t, h)

			w := do(h, call{method: "GET", path: "/session", cookie: cookie})
			if w.Code != 200 || !strings.Contains(w.Body.String(), "a@example.com") || !strings.Contains(w.Body.String(), csrf) || strings.Contains(w.Body.String(), "tok_") {
				t.Fatalf("GET /session: %d %s", w.Code, w.Body)
			}
			if w := do(h, call{method: "GET", path: "/session"}); w.Code != 401 {
				t.Fatalf("GET /session without a cookie: %d", w.Code)
			}

			w = do(h, call{method: "GET", path: "/api/account?x=1", cookie: cookie, headers: map[string]string{"Authorization": "Bearer forged"}})
			if w.Code != 200 {
				t.Fatalf("forwarded GET: %d %s", w.Code, w.Body)
			}
			path, hdr := api.last()
			if path != "GET /api/account?x=1" || hdr.Get("Authorization") != "Bearer tok_secret" || hdr.Get("Cookie") != "" {
				t.Fatalf("the API saw %s with %v", path, hdr)
			}
			if w.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("the API's CORS headers reached the page")
			}
			do(h, call{method: "GET", path: "/api/plans"})
			if _, hdr := api.last(); hdr.Get("Authorization") != "" {
				t.Fatalf("a signed-out call carried %q", hdr.Get("Authorization"))
			}
		})
	}
}

func TestStateChangingCallsNeedOriginAndCSRF(t *testing.T) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			h, api := sessionHandler(t, store)
			cookie, csrf := signIn(t, h)
			own := "http://127.0.0.1:5173"
			cases := []struct {
				name    string
				c       call
				status  int
				reached bool
			}{
				{"no csrf token", call{method: "POST", path: "/api/apps", cookie: cookie, headers: map[string]string{"Origin": own}}, 403, false},
				{"wrong csrf token", call{method: "DELETE", path: "/api/apps/x", cookie: cookie, headers: map[string]string{"Origin": own, csrfHeader: "nope"}}, 403, false},
				{"another origin", call{method: "POST", path: "/api/apps", cookie: cookie, headers: map[string]string{"Origin": "https://evil.example", csrfHeader: csrf}}, 403, false},
				{"cross-site fetch", call{method: "PUT", path: "/api/apps/x/env", cookie: cookie, headers: map[string]string{"Sec-Fetch-Site": "cross-site", csrfHeader: csrf}}, 403, false},
				{"the page's own call", call{method: "POST", path: "/api/apps", cookie: cookie, headers: map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", csrfHeader: csrf}}, 200, true},
				{"a read needs no token", call{method: "GET", path: "/api/apps", cookie: cookie}, 200, true},
				{"signed out: forwarded without a bearer", call{method: "POST", path: "/api/auth/magic-link", headers: map[string]string{"Origin": own}}, 401, true},
				{"signed out from another site", call{method: "POST", path: "/api/auth/magic-link", headers: map[string]string{"Origin": "https://evil.example"}}, 403, false},
				{"verify is the console's own", call{method: "POST", path: "/api/auth/magic-link/verify", cookie: cookie, headers: map[string]string{"Origin": own, csrfHeader: csrf}}, 404, false},
				{"no token exchange", call{method: "POST", path: "/api/auth/cli/token", headers: map[string]string{"Origin": own}}, 404, false},
				{"sign-in from another site", call{method: "POST", path: "/session/verify", body: `{"token":"good"}`, headers: map[string]string{"Origin": "https://evil.example"}}, 403, false},
				{"logout without the token", call{method: "POST", path: "/session/logout", cookie: cookie, headers: map[string]string{"Origin": own}}, 403, false},
			}
			for _, c := range cases {
				before := len(api.paths)
				w := do(h, c.c)
				if w.Code != c.status {
					t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.status)
				}
				if reached := len(api.paths) > before; reached != c.reached {
					t.Errorf("%s: reached the API %v, want %v", c.name, reached, c.reached)
				}
				if w.Code >= 400 && !strings.Contains(w.Body.String(), `"error"`) {
					t.Errorf("%s: error body %q is not the contract's shape", c.name, w.Body)
				}
			}
		})
	}
}

func TestVerifyRelaysTheAPIsRefusal(t *testing.T) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			h, _ := sessionHandler(t, store)
			w := do(h, call{method: "POST", path: "/session/verify", body: `{"token":"used"}`})
			if w.Code != 400 || !strings.Contains(w.Body.String(), "invalid_token") || len(w.Result().Cookies()) != 0 {
				t.Fatalf("verify of a used code: %d %s %v", w.Code, w.Body, w.Result().Cookies())
			}
			if w := do(h, call{method: "POST", path: "/session/verify", body: `not json`}); w.Code != 400 || !strings.Contains(w.Body.String(), "invalid_body") {
				t.Fatalf("verify of garbage: %d %s", w.Code, w.Body)
			}
		})
	}
}

func TestLogoutRevokesAndForgets(t *testing.T) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			h, api := sessionHandler(t, store)
			cookie, csrf := signIn(t, h)
			w := do(h, call{method: "POST", path: "/session/logout", cookie: cookie, headers: map[string]string{"Origin": "http://127.0.0.1:5173", csrfHeader: csrf}})
			if w.Code != 204 {
				t.Fatalf("logout: %d %s", w.Code, w.Body)
			}
			if !api.isRevoked("tok_secret") {
				t.Fatal("logout did not revoke the token at the API")
			}
			if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
				t.Fatalf("logout did not clear the cookie: %v", cs)
			}
			if w := do(h, call{method: "GET", path: "/session", cookie: cookie}); w.Code != 401 {
				t.Fatalf("the session outlived logout: %d", w.Code)
			}
		})
	}
}

func TestAPI401ForgetsTheSession(t *testing.T) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			h, api := sessionHandler(t, store)
			cookie, _ := signIn(t, h)
			api.mu.Lock()
			api.revoked["tok_secret"] = true // revoked elsewhere (another tab, the CLI, an operator)
			api.mu.Unlock()
			w := do(h, call{method: "GET", path: "/api/account", cookie: cookie})
			if w.Code != 401 || !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") {
				t.Fatalf("a 401 from the API: %d, Set-Cookie %q", w.Code, w.Header().Get("Set-Cookie"))
			}
			if w := do(h, call{method: "GET", path: "/session", cookie: cookie}); w.Code != 401 {
				t.Fatalf("the session outlived the API's 401: %d", w.Code)
			}
		})
	}
}

func TestSecureCookieOutsideLoopback(t *testing.T) {
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"CONSOLE_URL": "https://console.tori.dev"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.setCookie(w, "id", h.started.AddDate(0, 0, 30))
	c := w.Result().Cookies()[0]
	if !c.Secure || c.Name != "__Host-tori_console" || !c.HttpOnly {
		t.Fatalf("cookie outside loopback: %+v", c)
	}
}

// The redis store keeps a session across a restart (a new Handler on the same Redis) and holds
// no API token in the clear.
func TestRedisStoreSurvivesARestartAndHoldsNoToken(t *testing.T) {
	h, api := sessionHandler(t, "redis")
	cookie, _ := signIn(t, h)
	opts, err := redis.ParseURL(redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	raw, err := rdb.Get(context.Background(), redisPrefix+lookupKey(cookie.Value)).Result()
	if err != nil {
		t.Fatalf("the session is not in Redis: %v", err)
	}
	if strings.Contains(raw, "tok_") || strings.Contains(raw, "a@example.com") {
		t.Fatal("Redis holds the session in the clear")
	}
	if ttl := rdb.TTL(context.Background(), redisPrefix+lookupKey(cookie.Value)).Val(); ttl <= 0 {
		t.Fatalf("the session's key has no expiry: %v", ttl)
	}
	restarted := handlerFor(t, "redis", h.cfg.BaseURL)
	if w := do(restarted, call{method: "GET", path: "/api/account", cookie: cookie}); w.Code != 200 {
		t.Fatalf("after a restart: %d %s", w.Code, w.Body)
	}
	if _, hdr := api.last(); hdr.Get("Authorization") != "Bearer tok_secret" {
		t.Fatalf("after a restart the API saw %q", hdr.Get("Authorization"))
	}
	// Another cookie id opens nothing, even one that hashes near.
	if w := do(restarted, call{method: "GET", path: "/session", cookie: &http.Cookie{Name: cookie.Name, Value: cookie.Value + "x"}}); w.Code != 401 {
		t.Fatalf("a forged cookie: %d", w.Code)
	}
}

func TestRedisStoreDownIsA503(t *testing.T) {
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"CONSOLE_SESSION_STORE": "redis", "REDIS_URL": "redis://127.0.0.1:1/0"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/session", "/readyz"} {
		w := do(h, call{method: "GET", path: path, cookie: &http.Cookie{Name: "tori_console", Value: "x"}})
		if w.Code != 503 {
			t.Errorf("%s with Redis down: %d %s", path, w.Code, w.Body)
		}
	}
}
