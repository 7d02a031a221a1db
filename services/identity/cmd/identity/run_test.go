package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/mail/mailtest"
)

const console = "http://console.test"

// start runs the whole service in-process with extra added to the environment testinfra
// makes for it.
func start(t *testing.T, extra map[string]string) *testinfra.Running {
	t.Helper()
	env := map[string]string{"CONSOLE_URL": console}
	for k, v := range extra {
		env[k] = v
	}
	return testinfra.Service{Name: "identity", Serve: serve, Env: env}.Start(t)
}

// call sends a request signed as the gateway would sign it for caller c.
func call(t *testing.T, svc *testinfra.Running, method, path string, body any, c callerid.Caller) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, svc.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	callerid.Sign([]byte(svc.Env["GATEWAY_SIGNING_KEY"]), req.Header.Set, c, method, req.Host, path, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m
}

var linkRe = regexp.MustCompile(regexp.QuoteMeta(console) + `/auth/verify\?token=([A-Za-z0-9_%-]+)`)

func codeIn(t *testing.T, text string) string {
	t.Helper()
	m := linkRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no sign-in link in the mail:\n%s", text)
	}
	c, _ := url.QueryUnescape(m[1])
	return c
}

// signIn verifies a code and returns the gateway's caller for the session.
func signIn(t *testing.T, svc *testinfra.Running, code string) callerid.Caller {
	t.Helper()
	st, m := call(t, svc, "POST", "/api/auth/magic-link/verify", map[string]string{"token": code}, callerid.Caller{})
	if st != 200 {
		t.Fatalf("verify: %d %v", st, m)
	}
	st, in := call(t, svc, "POST", "/internal/introspect", map[string]string{"token": m["token"].(string)}, callerid.Caller{})
	if st != 200 {
		t.Fatalf("introspect: %d %v", st, in)
	}
	return callerid.Caller{AccountID: in["accountId"].(string), UserID: in["userId"].(string), TokenKind: "session", TokenID: in["tokenId"].(string)}
}

// Over SMTP: the mail reaches the server SMTP_URL names, and the whole service runs against
// the real bus: events leave through the outbox, billing's plan arrives by event and by
// request/reply, and a silent billing makes the account page 503 rather than guess.
func TestServiceOverSMTPAndBus(t *testing.T) {
	smtp := mailtest.NewServer(t)
	svc := start(t, map[string]string{"SMTP_URL": smtp.URL()})
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, svc.Env); err != nil {
		t.Fatal(err)
	}
	conn := testinfra.DialBus(t, cfg.Config.WithURL(svc.Env["AMQP_URL"]), logging.New("test", io.Discard))

	// What identity publishes.
	got := make(chan bus.Delivery, 64)
	testinfra.Background(t, "listener", func(ctx context.Context) error {
		return conn.Listen(ctx, []string{"identity.#"}, func(ctx context.Context, d bus.Delivery) error {
			select {
			case got <- d:
			case <-ctx.Done():
			}
			return nil
		})
	})

	// A stand-in billing: answers flock for accounts it is told about, refuses the rest.
	var mu sync.Mutex
	known := map[string]bool{}
	testinfra.Background(t, "stand-in billing", func(ctx context.Context) error {
		return conn.Serve(ctx, "billing.rpc.account_plan", func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req billingv1.AccountPlanRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if !known[req.AccountId] {
				return nil, bus.Reject("not_found", "no such account")
			}
			return &billingv1.AccountPlanReply{Plan: "flock", Limits: &billingv1.PlanLimits{CustomDomains: 50, DatabaseConnections: 100, DatabaseBytes: 10737418240}, Version: 1}, nil
		})
	})
	billing := testinfra.DialBusAs(t, cfg.Config, bus.PrincipalBilling, logging.New("test", io.Discard))
	billingOutbox := fakeBillingOutbox(t, svc.Env["DATABASE_URL"], billing)

	// Sign in over SMTP. The test's listener may still be binding, so sign in until an
	// account.created arrives (each sign-in of a new address creates one).
	var ada callerid.Caller
	var created identityv1.AccountCreated
	for i := 0; created.AccountId == "" && i < 10; i++ {
		email := "ada" + string(rune('a'+i)) + "@example.com"
		if st, m := call(t, svc, "POST", "/api/auth/magic-link", map[string]string{"email": email}, callerid.Caller{}); st != 202 {
			t.Fatalf("magic-link: %d %v", st, m)
		}
		msg := smtp.Wait(t, i+1)[i]
		if len(msg.To) != 1 || msg.To[0] != email || msg.From != "no-reply@tori.localhost" || !strings.Contains(msg.Data, "Subject: Sign in to Tori") {
			t.Fatalf("mail %+v", msg)
		}
		ada = signIn(t, svc, codeIn(t, msg.Data))
		waitEvent(got, 3*time.Second, func(d bus.Delivery) bool {
			return d.RoutingKey == "identity.account.created" && d.Decode(&created) == nil && created.AccountId == ada.AccountID
		})
	}
	if created.AccountId != ada.AccountID || created.DefaultRegion != "eu" {
		t.Fatalf("no account.created for the signed-in account: %v", &created)
	}

	// Billing cannot say ada's plan and identity has no copy: 503, no guessed limits.
	if st, m := call(t, svc, "GET", "/api/account", nil, ada); st != 503 || m["error"] != "service_unavailable" || m["code"] != "service_unavailable" {
		t.Fatalf("no plan: %d %v", st, m)
	}
	// A second account billing knows: its answer by request/reply.
	st, _ := call(t, svc, "POST", "/api/auth/magic-link", map[string]string{"email": "bob@example.com"}, callerid.Caller{})
	if st != 202 {
		t.Fatal(st)
	}
	msgs := smtp.Wait(t, len(smtp.Messages()))
	bob := signIn(t, svc, codeIn(t, msgs[len(msgs)-1].Data))
	mu.Lock()
	known[bob.AccountID] = true
	mu.Unlock()
	if _, m := call(t, svc, "GET", "/api/account", nil, bob); m["plan"] != "flock" || m["limits"].(map[string]any)["maxCustomDomains"] != float64(50) {
		t.Fatalf("billing's answer not shown: %v", m)
	}

	// billing.account.plan_changed updates identity's copy.
	billingOutbox(&billingv1.AccountPlanChanged{AccountId: ada.AccountID, Plan: "songbird", Version: 3, ChangedAt: timestamppb.Now(),
		Limits: &billingv1.PlanLimits{CustomDomains: 5, DatabaseConnections: 20, DatabaseBytes: 1073741824}})
	var account map[string]any
	testinfra.Eventually(t, 10*time.Second, "plan_changed applied", func() bool {
		_, account = call(t, svc, "GET", "/api/account", nil, ada)
		return account["plan"] == "songbird"
	})
	db := account["limits"].(map[string]any)["database"].(map[string]any)
	if db["connectionLimit"] != float64(20) || db["maxBytes"] != float64(1073741824) {
		t.Fatalf("limits %v", account["limits"])
	}

	// Logout reaches the gateways as token.revoked.
	if st, _ := call(t, svc, "POST", "/api/auth/logout", nil, ada); st != 204 {
		t.Fatal(st)
	}
	var revoked identityv1.TokenRevoked
	if !waitEvent(got, 10*time.Second, func(d bus.Delivery) bool {
		return d.RoutingKey == "identity.token.revoked" && d.Decode(&revoked) == nil && revoked.TokenId == ada.TokenID
	}) {
		t.Fatal("no token.revoked for the logout")
	}
	if strings.Contains(svc.Logs.String(), "auth/verify") {
		t.Fatal("a log line holds the sign-in link")
	}

	// Another service's audit entry lands in the log once, however often it is delivered,
	// with its user's address: the second, a later marker, shows the first was not doubled.
	entry := &auditv1.EntryRecorded{EntryId: "0190f5e4-0000-7000-8000-0000000000a1", TeamId: bob.AccountID, At: timestamppb.Now(),
		ActorType: "user", UserId: bob.UserID, Action: "billing.checkout", Target: "billing/checkout", Outcome: "success"}
	publishAs(t, ctx(), billingOutboxPool(t, svc), auditbus.Key("billing"), entry)
	publishAs(t, ctx(), billingOutboxPool(t, svc), auditbus.Key("billing"), entry)
	marker := proto.Clone(entry).(*auditv1.EntryRecorded)
	marker.EntryId = "0190f5e4-0000-7000-8000-0000000000a2"
	publishAs(t, ctx(), billingOutboxPool(t, svc), auditbus.Key("billing"), marker)
	admin, err := pgxpool.New(ctx(), svc.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	testinfra.Eventually(t, 10*time.Second, "audit entries recorded", func() bool {
		var n int
		return admin.QueryRow(ctx(), `SELECT count(*) FROM identity.audit_entries WHERE id = $1`, marker.EntryId).Scan(&n) == nil && n == 1
	})
	var n int
	var email string
	if err := admin.QueryRow(ctx(), `SELECT count(*), max(email) FROM identity.audit_entries WHERE id = $1`, entry.EntryId).Scan(&n, &email); err != nil ||
		n != 1 || email != "bob@example.com" {
		t.Fatalf("entry recorded %d times, email %q, %v", n, email, err)
	}
}

func ctx() context.Context { return context.Background() }

// billingOutboxPool is the stand-in billing's outbox (fakeBillingOutbox made it).
func billingOutboxPool(t *testing.T, svc *testinfra.Running) *pgxpool.Pool {
	t.Helper()
	pool, err := pgstore.Setup(ctx(), svc.Env["DATABASE_URL"], pgstore.Service{Schema: "fakebilling", Role: "tori_test_fakebilling"}, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func publishAs(t *testing.T, ctx context.Context, pool *pgxpool.Pool, key string, m proto.Message) {
	t.Helper()
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, key, m) }); err != nil {
		t.Fatal(err)
	}
}

// waitEvent reads deliveries until match accepts one or timeout passes.
func waitEvent(ch <-chan bus.Delivery, timeout time.Duration, match func(bus.Delivery) bool) bool {
	deadline := time.After(timeout)
	for {
		select {
		case d := <-ch:
			if match(d) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// fakeBillingOutbox publishes as billing would, from an outbox of its own in the service's
// database.
func fakeBillingOutbox(t *testing.T, admin string, conn *bus.Conn) func(proto.Message) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgstore.Setup(ctx, admin, pgstore.Service{Schema: "fakebilling", Role: "tori_test_fakebilling"}, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	testinfra.Background(t, "billing outbox relay", bus.NewRelay(conn, pool, logging.New("test", io.Discard)).Run)
	return func(m proto.Message) {
		publish(t, ctx, pool, m)
	}
}

func publish(t *testing.T, ctx context.Context, pool *pgxpool.Pool, m proto.Message) {
	t.Helper()
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		return bus.Publish(ctx, tx, "billing.account.plan_changed", m)
	}); err != nil {
		t.Fatal(err)
	}
}

// Without SMTP_URL each mail is a file under DATA_DIR/mail, and the log says only where.
func TestMailFilesWithoutSMTP(t *testing.T) {
	svc := start(t, nil)
	if st, m := call(t, svc, "POST", "/api/auth/magic-link", map[string]string{"email": "ada@example.com"}, callerid.Caller{}); st != 202 {
		t.Fatalf("magic-link: %d %v", st, m)
	}
	files, _ := filepath.Glob(filepath.Join(svc.Env["DATA_DIR"], "mail", "*.eml"))
	if len(files) != 1 {
		t.Fatalf("mail files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	code := codeIn(t, string(b))
	if !strings.Contains(string(b), "To: ada@example.com") {
		t.Fatalf("mail file:\n%s", b)
	}
	if !strings.Contains(svc.Logs.String(), files[0]) || strings.Contains(svc.Logs.String(), code) {
		t.Fatalf("log must name the file and not the code:\n%s", svc.Logs.String())
	}
	signIn(t, svc, code)
}
