package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/google/uuid"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/gateway"
	"tori.dev/services/gateway/internal/auth"
)

// identity plays every upstream: it introspects tokens from a table, counting the calls, and
// answers anything else with 200.
type identity struct {
	srv   *httptest.Server
	calls atomic.Int64
	mu    sync.Mutex
	valid map[string]auth.Introspection
}

func newIdentity(t *testing.T) *identity {
	id := &identity{valid: map[string]auth.Introspection{}}
	id.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != auth.IntrospectPath {
			_, _ = io.WriteString(w, `{}`)
			return
		}
		id.calls.Add(1)
		var req struct{ Token string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		id.mu.Lock()
		in, ok := id.valid[req.Token]
		id.mu.Unlock()
		if !ok {
			w.Header().Set(auth.TokenUnknownHeader, "1")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(in)
	}))
	t.Cleanup(id.srv.Close)
	return id
}

func (id *identity) set(token string, in *auth.Introspection) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if in == nil {
		delete(id.valid, token)
		return
	}
	id.valid[token] = *in
}

func start(t *testing.T, env map[string]string) *testinfra.Running {
	t.Helper()
	return testinfra.Service{Name: "gateway", Serve: serve, ReadyPath: "/healthz", Env: env}.Start(t)
}

func call(t *testing.T, method, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func TestServesItsOwnRoutesAndStopsCleanly(t *testing.T) {
	gw := start(t, nil)
	if status, body := call(t, "GET", gw.URL+"/api/openapi.json", ""); status != 200 || !bytes.Equal(body, gateway.OpenAPI) {
		t.Fatalf("openapi: %d, %d bytes; want the repository's document", status, len(body))
	}
}

// The per-address bucket on /api/auth/* counts in the gateway's own Postgres schema.
func TestAuthRoutesAreLimitedThroughPostgres(t *testing.T) {
	id := newIdentity(t)
	gw := start(t, map[string]string{"IDENTITY_URL": id.srv.URL, "AUTH_LIMIT_PER_15MIN": "2"})
	for i := 0; i < 2; i++ {
		if status, body := call(t, "POST", gw.URL+"/api/auth/magic-link", ""); status != 200 {
			t.Fatalf("request %d: %d %s", i+1, status, body)
		}
	}
	if status, body := call(t, "POST", gw.URL+"/api/auth/magic-link", ""); status != 429 {
		t.Fatalf("request 3: %d %s, want 429", status, body)
	}
}

// The revocation listener runs in the gateway's group: a token identity revokes on the bus
// leaves the running gateway's cache.
func TestARevokedTokenLeavesTheCache(t *testing.T) {
	id := newIdentity(t)
	tokenID := uuid.NewString()
	id.set("svc_alice", &auth.Introspection{AccountID: "acct-a", UserID: "user-a", TokenKind: "api", TokenID: tokenID})
	gw := start(t, map[string]string{"IDENTITY_URL": id.srv.URL, "APPS_URL": id.srv.URL})
	publish := revoker(t, gw.Env)

	testinfra.Eventually(t, 10*time.Second, "the token answered from the cache", func() bool {
		before := id.calls.Load()
		status, _ := call(t, "GET", gw.URL+"/api/apps", "svc_alice")
		return status == 200 && id.calls.Load() == before
	})
	id.set("svc_alice", nil)
	publish(tokenID)
	testinfra.Eventually(t, 5*time.Second, "the revoked token refused", func() bool {
		status, _ := call(t, "GET", gw.URL+"/api/apps", "svc_alice")
		return status == 401
	})
}

// revoker is identity's half of a revocation: an outbox in a schema of its own, in the
// gateway's database, relayed to the gateway's bus namespace.
func revoker(t *testing.T, env map[string]string) func(tokenID string) {
	t.Helper()
	ctx := context.Background()
	svc := pgstore.Service{Schema: "revoker", Role: "tori_test_revoker"}
	pool, err := pgstore.Setup(ctx, env["DATABASE_URL"], svc, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var cfg bus.Config // the gateway's own, so both declare the shared names alike
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		t.Fatal(err)
	}
	conn := testinfra.DialBusAs(t, cfg, bus.PrincipalIdentity, logging.New("revoker", io.Discard))
	testinfra.Background(t, "revoker relay", bus.NewRelay(conn, pool, logging.New("revoker", io.Discard)).Run)
	return func(tokenID string) {
		t.Helper()
		err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			return bus.Publish(ctx, tx, identitybus.KeyTokenRevoked, &identityv1.TokenRevoked{TokenId: tokenID, AccountId: uuid.NewString()})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
