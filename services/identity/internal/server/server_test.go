package server_test

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
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/mail/mailtest"
	"tori.dev/services/identity/internal/server"
	"tori.dev/services/identity/internal/store/storetest"
)

const (
	key     = "integration-key"
	console = "http://console.test"
)

// syncBuffer collects log lines from the service's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is the service's environment for a test: its own database and bus namespace.
func env(t *testing.T, extra map[string]string) (map[string]string, string) {
	admin := storetest.NewDatabase(t)
	e := map[string]string{
		"IDENTITY_ADDR":       "127.0.0.1:0",
		"DATABASE_URL":        admin,
		"GATEWAY_SIGNING_KEY": key,
		"CONSOLE_URL":         console,
		"DATA_DIR":            t.TempDir(),
		"AMQP_URL":            testinfra.AMQPURL(t),
		"BUS_NAMESPACE":       testinfra.Namespace(t),
		"BUS_QUEUE_TYPE":      "classic",
		"BUS_QUEUE_EXPIRES":   "5m",
		"BUS_BASE_BACKOFF":    "20ms",
		"BUS_REQUEST_TIMEOUT": "3s",
	}
	for k, v := range extra {
		e[k] = v
	}
	return e, admin
}

// start runs the service until the test ends.
func start(t *testing.T, e map[string]string) (string, config.Config, *syncBuffer) {
	t.Helper()
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, e); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, logging.New("identity", logs), "test")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return "http://" + srv.Addr(), cfg, logs
}

// call sends a gateway-signed request.
func call(t *testing.T, base, method, path string, body any, c callerid.Caller) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	callerid.Sign([]byte(key), req.Header.Set, c, method, path, time.Now())
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
func signIn(t *testing.T, base, code string) callerid.Caller {
	t.Helper()
	st, m := call(t, base, "POST", "/api/auth/magic-link/verify", map[string]string{"token": code}, callerid.Caller{})
	if st != 200 {
		t.Fatalf("verify: %d %v", st, m)
	}
	st, in := call(t, base, "POST", "/internal/introspect", map[string]string{"token": m["token"].(string)}, callerid.Caller{})
	if st != 200 {
		t.Fatalf("introspect: %d %v", st, in)
	}
	return callerid.Caller{AccountID: in["accountId"].(string), UserID: in["userId"].(string), TokenKind: "session", TokenID: in["tokenId"].(string)}
}

// Over SMTP: the mail reaches the server SMTP_URL names, and the whole service runs against
// the real bus: events leave through the outbox, billing's plan arrives by event and by
// request/reply, and a silent billing falls back to nestling.
func TestServiceOverSMTPAndBus(t *testing.T) {
	smtp := mailtest.NewServer(t)
	e, admin := env(t, map[string]string{"SMTP_URL": smtp.URL()})
	base, cfg, logs := start(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	conn, err := bus.Dial(ctx, cfg.Config, logging.New("test", io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// What identity publishes.
	got := make(chan bus.Delivery, 64)
	go conn.Listen(ctx, []string{"identity.#"}, func(ctx context.Context, d bus.Delivery) error {
		select {
		case got <- d:
		case <-ctx.Done():
		}
		return nil
	})

	// A stand-in billing: answers flock for accounts it is told about, refuses the rest.
	var mu sync.Mutex
	known := map[string]bool{}
	go conn.Serve(ctx, "billing.rpc.account_plan", func(_ context.Context, d bus.Delivery) (proto.Message, error) {
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
	billingOutbox := fakeBillingOutbox(t, ctx, admin, conn)

	// Sign in over SMTP. The listener may still be binding, so sign in until an
	// account.created arrives (each sign-in of a new address creates one).
	var ada callerid.Caller
	var created identityv1.AccountCreated
	for i := 0; created.AccountId == "" && i < 10; i++ {
		email := "ada" + string(rune('a'+i)) + "@example.com"
		if st, m := call(t, base, "POST", "/api/auth/magic-link", map[string]string{"email": email}, callerid.Caller{}); st != 202 {
			t.Fatalf("magic-link: %d %v", st, m)
		}
		msg := smtp.Wait(t, i+1)[i]
		if len(msg.To) != 1 || msg.To[0] != email || msg.From != "no-reply@tori.localhost" || !strings.Contains(msg.Data, "Subject: Sign in to Tori") {
			t.Fatalf("mail %+v", msg)
		}
		ada = signIn(t, base, codeIn(t, msg.Data))
		waitEvent(got, 3*time.Second, func(d bus.Delivery) bool {
			return d.RoutingKey == "identity.account.created" && d.Decode(&created) == nil && created.AccountId == ada.AccountID
		})
	}
	if created.AccountId != ada.AccountID || created.DefaultRegion != "eu" {
		t.Fatalf("no account.created for the signed-in account: %v", &created)
	}

	// Billing does not know the account: nestling.
	if st, m := call(t, base, "GET", "/api/account", nil, ada); st != 200 || m["plan"] != "nestling" {
		t.Fatalf("fallback: %d %v", st, m)
	}
	// A second account billing knows: its answer by request/reply.
	st, _ := call(t, base, "POST", "/api/auth/magic-link", map[string]string{"email": "bob@example.com"}, callerid.Caller{})
	if st != 202 {
		t.Fatal(st)
	}
	msgs := smtp.Wait(t, len(smtp.Messages()))
	bob := signIn(t, base, codeIn(t, msgs[len(msgs)-1].Data))
	mu.Lock()
	known[bob.AccountID] = true
	mu.Unlock()
	if _, m := call(t, base, "GET", "/api/account", nil, bob); m["plan"] != "flock" || m["limits"].(map[string]any)["maxCustomDomains"] != float64(50) {
		t.Fatalf("billing's answer not shown: %v", m)
	}

	// billing.account.plan_changed updates identity's copy.
	billingOutbox(&billingv1.AccountPlanChanged{AccountId: ada.AccountID, Plan: "songbird", Version: 3, ChangedAt: timestamppb.Now(),
		Limits: &billingv1.PlanLimits{CustomDomains: 5, DatabaseConnections: 20, DatabaseBytes: 1073741824}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m := call(t, base, "GET", "/api/account", nil, ada)
		if m["plan"] == "songbird" {
			db := m["limits"].(map[string]any)["database"].(map[string]any)
			if db["connectionLimit"] != float64(20) || db["maxBytes"] != float64(1073741824) {
				t.Fatalf("limits %v", m["limits"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan_changed never applied: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Logout reaches the gateways as token.revoked.
	if st, _ := call(t, base, "POST", "/api/auth/logout", nil, ada); st != 204 {
		t.Fatal(st)
	}
	var revoked identityv1.TokenRevoked
	if !waitEvent(got, 10*time.Second, func(d bus.Delivery) bool {
		return d.RoutingKey == "identity.token.revoked" && d.Decode(&revoked) == nil && revoked.TokenId == ada.TokenID
	}) {
		t.Fatal("no token.revoked for the logout")
	}
	if strings.Contains(logs.String(), "auth/verify") {
		t.Fatal("a log line holds the sign-in link")
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

// fakeBillingOutbox publishes as billing would, from an outbox of its own.
func fakeBillingOutbox(t *testing.T, ctx context.Context, admin string, conn *bus.Conn) func(proto.Message) {
	t.Helper()
	pool, err := pgstore.Setup(ctx, admin, pgstore.Service{Schema: "fakebilling", Role: "tori_test_fakebilling"}, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	go bus.NewRelay(conn, pool, logging.New("test", io.Discard)).Run(ctx)
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
	e, _ := env(t, nil)
	base, cfg, logs := start(t, e)
	if st, m := call(t, base, "POST", "/api/auth/magic-link", map[string]string{"email": "ada@example.com"}, callerid.Caller{}); st != 202 {
		t.Fatalf("magic-link: %d %v", st, m)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.DataDir, "mail", "*.eml"))
	if len(files) != 1 {
		t.Fatalf("mail files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	code := codeIn(t, string(b))
	if !strings.Contains(string(b), "To: ada@example.com") {
		t.Fatalf("mail file:\n%s", b)
	}
	if !strings.Contains(logs.String(), files[0]) || strings.Contains(logs.String(), code) {
		t.Fatalf("log must name the file and not the code:\n%s", logs.String())
	}
	signIn(t, base, code)
}
