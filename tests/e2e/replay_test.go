package e2e

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// recorder stands between the gateway and the apps service, as a wire tap inside the cluster
// would: it forwards everything and keeps a copy of the last PUT it saw.
type recorder struct {
	target atomic.Pointer[url.URL]
	mu     sync.Mutex
	header http.Header
	body   []byte
	uri    string
	host   string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		rec.mu.Lock()
		rec.header, rec.body, rec.uri, rec.host = r.Header.Clone(), b, r.RequestURI, r.Host
		rec.mu.Unlock()
	}
	httputil.NewSingleHostReverseProxy(rec.target.Load()).ServeHTTP(w, r)
}

// A signed request captured between the gateway and a service is refused when sent again with
// another body (the signature covers the body) and when sent again, as it was, to a second
// replica of the service (state-changing requests claim their nonce in the service's own
// Postgres, which its replicas share).
func TestACapturedRequestCannotBeReplayed(t *testing.T) {
	tapAddr := testinfra.FreeAddr(t)
	ln, err := net.Listen("tcp", tapAddr)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := &http.Server{Handler: rec}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "APPS_URL": "http://" + tapAddr}})
	// The first replica is the stack's apps; the tap forwards to it.
	first, _ := url.Parse("http://" + s.Env["APPS_ADDR"])
	rec.target.Store(first)
	second := s.StartReplica(t, "apps-2", "apps", "APPS_ADDR")

	a := s.NewAccount(t, "replay")
	app := post(s, t, "/api/apps", a.Token, map[string]string{"kind": "service"})
	if app.Status != http.StatusCreated {
		t.Fatalf("app: %d %s", app.Status, app.Body)
	}
	slug := app.Map(t)["slug"].(string)
	put := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": "PAYOUT_TO", "value": "alice"}})
	if put.Status/100 != 2 {
		t.Fatalf("env write: %d %s", put.Status, put.Body)
	}
	rec.mu.Lock()
	header, body, uri, host := rec.header, rec.body, rec.uri, rec.host
	rec.mu.Unlock()
	if header == nil || header.Get("X-Tori-Signature") == "" || header.Get("X-Tori-Body-Digest") == "" {
		t.Fatalf("the tap saw no signed PUT with a body digest: %v", header)
	}

	replay := func(addr string, b []byte) *harness.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, "http://"+addr+uri, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header.Clone()
		req.Host = host // the signature names the service's address, as the gateway saw it
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return &harness.Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	}
	evil := []byte(strings.Replace(string(body), "alice", "mallory", 1))
	if bytes.Equal(evil, body) {
		t.Fatalf("captured body %s", body)
	}
	for _, addr := range []string{first.Host, second} {
		expectError(t, replay(addr, evil), http.StatusUnauthorized, "unauthorized")
	}
	expectError(t, replay(second, body), http.StatusUnauthorized, "unauthorized")
	expectError(t, replay(first.Host, body), http.StatusUnauthorized, "unauthorized")

	// The second replica serves fresh requests (through the gateway, once the tap points at it).
	secondURL, _ := url.Parse("http://" + second)
	rec.target.Store(secondURL)
	if r := s.Get(t, "/api/apps/"+slug+"/env", a.Token); r.Status != http.StatusOK || strings.Contains(string(r.Body), "mallory") {
		t.Fatalf("env read at the second replica: %d %s", r.Status, r.Body)
	}
}
