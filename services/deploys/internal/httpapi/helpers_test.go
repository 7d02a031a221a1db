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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/httpapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

var signingKey = []byte("test-signing-key-0123456789abcdef")

// clock is an injectable time: tests move it to cross deadlines without waiting.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// plans answers every account with the plan in p, or with err when billing is down.
type plans struct {
	p   usecase.Plan
	err error
}

func (p plans) AccountPlan(context.Context, string) (usecase.Plan, error) { return p.p, p.err }

// fakeEnv seals "vars#deploy": like real ciphertext, two snapshots of equal variables differ.
type fakeEnv struct {
	mu   sync.Mutex
	vars string
	// The last preview snapshot's request.
	overrides       map[string]string
	withoutDatabase bool
	previews        int
}

// PreviewSnapshot records what a preview's snapshot was asked with.
func (f *fakeEnv) PreviewSnapshot(_ context.Context, _, deployID string, overrides map[string]string, withoutDatabase bool) (deploy.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overrides, f.withoutDatabase = overrides, withoutDatabase
	f.previews++
	return deploy.Snapshot{Sealed: []byte(f.vars + "+preview#" + deployID), KeyID: "k1", For: deployID}, nil
}

func (f *fakeEnv) set(v string) { f.mu.Lock(); f.vars = v; f.mu.Unlock() }

func (f *fakeEnv) Snapshot(_ context.Context, _, deployID string) (deploy.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return deploy.Snapshot{Sealed: []byte(f.vars + "#" + deployID), KeyID: "k1", For: deployID}, nil
}

func (f *fakeEnv) Same(_ context.Context, _ string, a, b deploy.Snapshot) (bool, error) {
	strip := func(s []byte) string { return strings.SplitN(string(s), "#", 2)[0] }
	return strip(a.Sealed) == strip(b.Sealed), nil
}

type env struct {
	t       *testing.T
	pool    *pgxpool.Pool
	svc     *usecase.Service
	app     *fiber.App
	objDir  string
	clock   *clock
	env     *fakeEnv
	account string
	crons   *usecase.Crons
	// closed says the last response closed its connection.
	closed bool
}

var testPlan = usecase.Plan{Name: "songbird", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 20, MinScale: 1, CPU: 1}

func newEnv(t *testing.T, plan usecase.Plan) *env {
	t.Helper()
	return newEnvWithPlans(t, plans{p: plan})
}

// newEnvWithPlans is newEnv with billing's answers given by source.
func newEnvWithPlans(t *testing.T, source usecase.PlanSource) *env {
	t.Helper()
	pool := storetest.NewPool(t)
	dir := filepath.Join(t.TempDir(), "objects")
	objs, err := objects.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, pool: pool, objDir: dir, clock: &clock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}, env: &fakeEnv{vars: "A=1"}, account: uuid.NewString()}
	e.svc = usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, Plans: source, Env: e.env, Now: e.clock.Now,
		Registries: deploy.Registries{Resolver: testResolver{}}})
	e.crons = e.svc.Crons(store.New(pool), 0)
	e.app = httpapi.New(httpapi.Deps{Deploys: e.svc, Crons: e.crons, Previews: e.svc, PreviewsDomain: "preview.apps.localhost",
		SigningKey: signingKey, DB: pool, Health: health.NewIdentity("deploys", "test")})
	return e
}

// testResolver stands in for DNS: a few public-looking names that resolve to the host's
// loopback or a private address (as 127.0.0.1.nip.io does), and "no such host" for the
// rest, so no test depends on the machine's resolver.
type testResolver struct{}

func (testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "127.0.0.1.nip.io":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case "metadata.example.com":
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	case "ghcr.io":
		return []netip.Addr{netip.MustParseAddr("140.82.112.33")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// addApp records an app as apps.app.created would.
func (e *env) addApp(account, slug, kind string) string {
	e.t.Helper()
	id := uuid.NewString()
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnAppCreated(context.Background(), tx, usecase.App{ID: id, AccountID: account, Slug: slug, Kind: kind, Zone: "local"}, e.clock.Now())
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// request sends a request signed as account (a session without teams: the owner of the
// personal team whose id is account) through the app and returns status and body.
func (e *env) request(account, method, path, contentType string, body io.Reader, length int64) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.requestAs(callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session"}, method, path, contentType, body, length)
}

// requestAs is request signed as caller.
func (e *env) requestAs(caller callerid.Caller, method, path, contentType string, body io.Reader, length int64) (int, map[string]any, http.Header) {
	e.t.Helper()
	req := httptest.NewRequest(method, path, body)
	req.ContentLength = length
	if length < 0 {
		req.TransferEncoding = []string{"chunked"}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	callerid.Sign(signingKey, req.Header.Set, caller, method, req.Host, path, time.Now())
	resp, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	e.closed = resp.Close
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("decode %s: %v", raw, err)
		}
	} else if len(raw) > 0 && raw[0] == '[' {
		var list []any
		json.Unmarshal(raw, &list)
		out = map[string]any{"list": list}
	}
	return resp.StatusCode, out, resp.Header
}

// part is one multipart part with a raw Content-Disposition, so tests can send the paths Go's
// own writer would escape or strip.
type part struct {
	disposition string
	content     string
}

func file(name, content string) part {
	return part{fmt.Sprintf(`form-data; name="files"; filename="%s"`, name), content}
}

func multipartBody(parts ...part) (string, []byte) {
	const boundary = "tori-test-boundary"
	var b bytes.Buffer
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: %s\r\nContent-Type: application/octet-stream\r\n\r\n%s\r\n", boundary, p.disposition, p.content)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, b.Bytes()
}

func (e *env) upload(account, slug string, parts ...part) (int, map[string]any, http.Header) {
	ct, body := multipartBody(parts...)
	return e.request(account, "POST", "/api/apps/"+slug+"/deploys", ct, bytes.NewReader(body), int64(len(body)))
}

func (e *env) postJSON(account, path, body string) (int, map[string]any, http.Header) {
	return e.request(account, "POST", path, "application/json", strings.NewReader(body), int64(len(body)))
}

// rows counts deploy rows; objects counts committed objects and leftover temporary files.
func (e *env) rows() int {
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM deploys`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) files() []string {
	var out []string
	filepath.Walk(e.objDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func (e *env) assertNothingBehind(before int) {
	e.t.Helper()
	if n := e.rows(); n != before {
		e.t.Errorf("deploy rows: %d, want %d", n, before)
	}
	if f := e.files(); len(f) != before {
		e.t.Errorf("object files: %v, want %d", f, before)
	}
}

// outboxKeys lists the routing keys published so far, in order.
func (e *env) outboxKeys() []string {
	rows, err := e.pool.Query(context.Background(), `SELECT routing_key FROM outbox ORDER BY seq`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		rows.Scan(&k)
		out = append(out, k)
	}
	return out
}

// report applies a zone's progress report as the bus consumer would.
func (e *env) report(deployID string, step zonev1.DeployStep, code string) {
	e.t.Helper()
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnProgress(context.Background(), tx, &zonev1.DeployProgress{DeployId: deployID, Zone: "local", Step: step, Error: code})
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) status(deployID string) string {
	var s string
	if err := e.pool.QueryRow(context.Background(), `SELECT status FROM deploys WHERE id = $1`, deployID).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func digest() string { return strings.Repeat("0a", 32) }

type serviceTx = usecase.Tx
