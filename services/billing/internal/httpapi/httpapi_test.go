package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

var (
	ctx = context.Background()
	key = []byte("test-gateway-signing-key")
)

// The catalog as the contract and docs/conventions.md give it, written out by hand.
const plansJSON = `[
 {"name":"nestling","prices":{"month":0,"year":0},"limits":{"apps":3,"customDomains":0,"concurrentDeploys":1,
  "uploadBytes":104857600,"databaseBytes":268435456,"databaseConnections":5,"buildMinutes":10,"minScale":0,"cpu":0.25,"logRetentionDays":1,
  "processTypes":2,"instancesPerProcess":1,"instancesTotal":2,"cronJobs":2,"cronMinIntervalMinutes":60,"cronTimeoutSeconds":900,"instanceMemoryBytes":268435456,"members":3,"auditRetentionDays":7,"previews":1,"previewMaxTtlHours":24,"drains":1,"metricsRetentionDays":1}},
 {"name":"songbird","prices":{"month":9,"year":90},"limits":{"apps":10,"customDomains":5,"concurrentDeploys":2,
  "uploadBytes":524288000,"databaseBytes":1073741824,"databaseConnections":20,"buildMinutes":20,"minScale":1,"cpu":1,"logRetentionDays":7,
  "processTypes":4,"instancesPerProcess":3,"instancesTotal":8,"cronJobs":10,"cronMinIntervalMinutes":10,"cronTimeoutSeconds":3600,"instanceMemoryBytes":536870912,"members":10,"auditRetentionDays":30,"previews":5,"previewMaxTtlHours":168,"drains":3,"metricsRetentionDays":7}},
 {"name":"flock","prices":{"month":29,"year":290},"limits":{"apps":50,"customDomains":50,"concurrentDeploys":5,
  "uploadBytes":1073741824,"databaseBytes":10737418240,"databaseConnections":100,"buildMinutes":45,"minScale":1,"cpu":2,"logRetentionDays":30,
  "processTypes":8,"instancesPerProcess":10,"instancesTotal":40,"cronJobs":50,"cronMinIntervalMinutes":1,"cronTimeoutSeconds":14400,"instanceMemoryBytes":1073741824,"members":50,"auditRetentionDays":365,"previews":20,"previewMaxTtlHours":720,"drains":10,"metricsRetentionDays":30}}
]`

type fixture struct {
	app  *fiber.App
	svc  *usecase.Service
	st   *store.Store
	pool *pgxpool.Pool
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	pool := testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
	st := store.New(pool)
	svc := usecase.New(st)
	app := httpapi.New(httpapi.Deps{
		Billing:    svc,
		SigningKey: key,
		DB:         pool,
		Health:     health.NewIdentity("billing", "test"),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return fixture{app: app, svc: svc, st: st, pool: pool}
}

// account records a new account, as identity's account.created would.
func (f fixture) account(t *testing.T) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if err := f.st.InTx(ctx, func(tx usecase.Tx) error { return f.svc.RegisterAccount(ctx, tx, id, "ada@example.com") }); err != nil {
		t.Fatal(err)
	}
	return id
}

func userOf(account uuid.UUID) callerid.Caller {
	return callerid.Caller{AccountID: account.String(), UserID: uuid.NewString(), TokenKind: callerid.KindSession, TokenID: uuid.NewString()}
}

// request builds a request as the gateway forwards it: signed for caller with signKey, or
// unsigned when signKey is nil.
func request(method, path, body string, caller callerid.Caller, signKey []byte) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if signKey != nil {
		callerid.Sign(signKey, req.Header.Set, caller, method, req.Host, path, time.Now())
	}
	return req
}

func do(t *testing.T, app *fiber.App, req *http.Request) (int, string) {
	t.Helper()
	resp, err := app.Test(req, 5000)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sameJSON compares two JSON documents by value, ignoring key order and spacing.
func sameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("response is not JSON: %q", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("body\n %s\nwant\n %s", got, want)
	}
}

func TestPlansIsPublicButStillComesThroughTheGateway(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	status, body := do(t, f.app, request("GET", "/api/plans", "", callerid.Caller{}, key))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	sameJSON(t, body, `{"billing":{"currency":"EUR","taxInclusive":true,"overage":"none"},"plans":`+plansJSON+`}`)

	// A signed, authenticated caller sees the same.
	_, asUser := do(t, f.app, request("GET", "/api/plans", "", userOf(uuid.New()), key))
	sameJSON(t, asUser, body)
}

func TestRequestsWithoutTheGatewaysSignatureAre401(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	user := userOf(f.account(t))
	routes := []struct{ method, path, body string }{
		{"GET", "/api/plans", ""},
		{"GET", "/api/billing", ""},
		{"POST", "/api/billing/checkout", `{"plan":"songbird","interval":"month"}`},
		{"POST", "/api/billing/portal", ""},
		{"POST", "/api/billing/sync", ""},
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			for name, req := range map[string]*http.Request{
				"unsigned":            request(r.method, r.path, r.body, user, nil),
				"signed with another": request(r.method, r.path, r.body, user, []byte("not-the-gateways-key")),
			} {
				status, body := do(t, f.app, req)
				if status != 401 {
					t.Fatalf("%s: status %d: %s", name, status, body)
				}
				sameJSON(t, body, `{"error":"unauthorized"}`)
			}
		})
	}
}

func TestBillingRoutesNeedAnAuthenticatedCaller(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/billing"}, {"POST", "/api/billing/checkout"}, {"POST", "/api/billing/portal"}, {"POST", "/api/billing/sync"},
	} {
		status, body := do(t, f.app, request(r.method, r.path, "", callerid.Caller{}, key))
		if status != 401 {
			t.Fatalf("%s %s with an anonymous caller: %d %s", r.method, r.path, status, body)
		}
		sameJSON(t, body, `{"error":"unauthorized"}`)
	}
}

func TestBillingShowsTheCallersPlanAndNothingToPay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	onSongbird := f.account(t)
	if _, _, err := f.svc.SetPlan(ctx, accounts.Ref{ID: onSongbird}, "songbird"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		account uuid.UUID
		plan    string
	}{
		{"account on songbird", onSongbird, "songbird"},
		{"account on the default plan", f.account(t), "nestling"},
		// account.created may not have reached billing yet: every account starts on nestling.
		{"account billing has not heard of", uuid.Must(uuid.NewV7()), "nestling"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := `{"plan":"` + tc.plan + `","subscription":null,"invoices":[],"catalog":` + plansJSON + `,"configured":false,"hold":null}`
			for _, r := range []struct{ method, path string }{{"GET", "/api/billing"}, {"POST", "/api/billing/sync"}} {
				status, body := do(t, f.app, request(r.method, r.path, "", userOf(tc.account), key))
				if status != 200 {
					t.Fatalf("%s %s: %d %s", r.method, r.path, status, body)
				}
				sameJSON(t, body, want)
			}
		})
	}
}

// Checkout checks the request first, so a client's mistake gets its own 400; every
// well-formed request then gets 503 billing_unavailable, as the contract says while paid plans
// are off.
func TestCheckout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	user := userOf(f.account(t))
	cases := []struct {
		body   string
		status int
		code   string
	}{
		{`{"plan":"songbird","interval":"month"}`, 503, "billing_unavailable"},
		{`{"plan":"flock","interval":"year"}`, 503, "billing_unavailable"},
		{`{"plan":"nestling","interval":"month"}`, 400, "invalid_plan"},
		{`{"plan":"eagle","interval":"month"}`, 400, "invalid_plan"},
		{`{"interval":"month"}`, 400, "invalid_plan"},
		{`{"plan":"songbird","interval":"week"}`, 400, "invalid_interval"},
		{`{"plan":"songbird"}`, 400, "invalid_interval"},
		{`{"plan":"songbird","interval":"month"`, 400, "invalid_body"},
		{`{"plan":1,"interval":"month"}`, 400, "invalid_body"},
		{``, 400, "invalid_body"},
	}
	for _, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			status, body := do(t, f.app, request("POST", "/api/billing/checkout", tc.body, user, key))
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			var e struct{ Error, Code, Message string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error != tc.code || e.Code != tc.code || e.Message == "" {
				t.Fatalf("body %s: want error and code %s with a message", body, tc.code)
			}
		})
	}
}

func TestPortalIsUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	status, body := do(t, f.app, request("POST", "/api/billing/portal", "", userOf(f.account(t)), key))
	if status != 503 {
		t.Fatalf("status %d: %s", status, body)
	}
	sameJSON(t, body, `{"error":"billing_unavailable","code":"billing_unavailable","message":"paid plans are not enabled yet"}`)
}

// A caller whose signed account id is not an id identity issues is not served.
func TestCallerWithAMalformedAccountIDIs401(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	caller := callerid.Caller{AccountID: "acc_1", UserID: "u", TokenKind: callerid.KindSession, TokenID: "t"}
	status, body := do(t, f.app, request("GET", "/api/billing", "", caller, key))
	if status != 401 {
		t.Fatalf("status %d: %s", status, body)
	}
}

func TestHealthzNeedsNoSignature(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	status, body := do(t, f.app, httptest.NewRequest("GET", "/healthz", nil))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var id health.Identity
	if err := json.Unmarshal([]byte(body), &id); err != nil || id.Service != "billing" || id.Instance == "" {
		t.Fatalf("healthz %s", body)
	}
}
