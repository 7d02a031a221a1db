package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/access"
	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/httpapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/usecase"
)

const consoleURL = "http://console.test:5173"

var signingKey = []byte("test-signing-key")

// fakeClock is the injectable clock: tests move time instead of sleeping.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fakeMailer keeps what would have been sent; fail makes it refuse.
type fakeMailer struct {
	mu   sync.Mutex
	msgs []usecase.Mail
	fail bool
	next usecase.Mailer // when set, also delivers there (the log test uses a real FileSender)
}

func (m *fakeMailer) Send(ctx context.Context, msg usecase.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("mail server said no")
	}
	m.msgs = append(m.msgs, msg)
	if m.next != nil {
		return m.next.Send(ctx, msg)
	}
	return nil
}

func (m *fakeMailer) last(t *testing.T) usecase.Mail {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.msgs) == 0 {
		t.Fatal("no mail sent")
	}
	return m.msgs[len(m.msgs)-1]
}

// fakePlans stands in for billing's request/reply answer.
type fakePlans struct {
	mu    sync.Mutex
	plan  *account.Plan // nil: billing does not answer
	calls int
}

// nestling is billing's answer for an account it has not recorded: nestling at version 0,
// so any plan_changed event outranks it.
var nestling = account.Plan{Name: "nestling", Limits: account.Limits{MaxCustomDomains: 0, DatabaseConnections: 5, DatabaseBytes: 268435456,
	Processes: account.ProcessLimits{ProcessTypes: 2, InstancesPerProcess: 1, InstancesTotal: 2, CronJobs: 2,
		CronMinIntervalMinutes: 60, CronTimeoutSeconds: 900, InstanceMemoryBytes: 268435456}}}

func (p *fakePlans) AccountPlan(ctx context.Context, accountID string) (account.Plan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.plan == nil {
		return account.Plan{}, fmt.Errorf("%w: bus: request timed out", usecase.ErrPlanUnavailable)
	}
	return *p.plan, nil
}

type harness struct {
	t      *testing.T
	app    *fiber.App
	clock  *fakeClock
	mailer *fakeMailer
	plans  *fakePlans
	pool   *pgxpool.Pool
	store  usecase.Store
	logs   *testinfra.LogBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	st, pool := storetest.New(t)
	h := &harness{
		t:      t,
		clock:  &fakeClock{now: time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)},
		mailer: &fakeMailer{},
		plans:  &fakePlans{plan: &nestling},
		pool:   pool,
		store:  st,
		logs:   &testinfra.LogBuffer{},
	}
	log := logging.New("identity", h.logs)
	svc := usecase.New(usecase.Deps{Store: st, Mailer: h.mailer, Plans: h.plans, Log: log, Now: h.clock.Now, ConsoleURL: consoleURL})
	gate := accessgate.New(nil, store.WriteAuditEntry, pool, log)
	h.app = httpapi.New(httpapi.Config{Service: svc, SigningKey: signingKey, Log: log, Health: health.NewIdentity("identity", "test"), Gate: gate})
	return h
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %q", r.body)
	}
	return m
}

func (r response) list(t *testing.T) []map[string]any {
	t.Helper()
	var l []map[string]any
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatalf("body is not a JSON array: %q", r.body)
	}
	return l
}

// anonymous is the signed empty caller the gateway sends on public routes.
var anonymous = &callerid.Caller{}

// raw sends body as it is; caller nil sends no signature at all.
func (h *harness) raw(method, path string, body []byte, caller *callerid.Caller) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if caller != nil {
		callerid.Sign(signingKey, req.Header.Set, *caller, method, req.Host, path, time.Now())
	}
	res, err := h.app.Test(req, -1)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// do sends body as JSON (nil: no body).
func (h *harness) do(method, path string, body any, caller *callerid.Caller) response {
	h.t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			h.t.Fatal(err)
		}
	}
	return h.raw(method, path, b, caller)
}

// expect checks status and, for errors, the error code.
func (h *harness) expect(r response, status int, code string) map[string]any {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code == "" {
		return nil
	}
	m := r.json(h.t)
	if m["error"] != code {
		h.t.Fatalf("error %v, want %q: %s", m["error"], code, r.body)
	}
	return m
}

var tokenInLink = regexp.MustCompile(`/auth/verify\?token=([A-Za-z0-9_%-]+)`)

// magicCode requests a link for email and returns the code from the mail.
func (h *harness) magicCode(email string) string {
	h.t.Helper()
	h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": email}, anonymous), 202, "")
	m := tokenInLink.FindStringSubmatch(h.mailer.last(h.t).Text)
	if m == nil {
		h.t.Fatalf("no verify link in the mail")
	}
	code, _ := url.QueryUnescape(m[1])
	return code
}

// signIn signs email in and returns the session token and the caller the gateway would sign.
func (h *harness) signIn(email string) (string, *callerid.Caller) {
	h.t.Helper()
	r := h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": h.magicCode(email)}, anonymous)
	h.expect(r, 200, "")
	tok := r.json(h.t)["token"].(string)
	return tok, h.callerOf(tok)
}

// callerOf introspects a token as the gateway does and builds its caller.
func (h *harness) callerOf(token string) *callerid.Caller {
	h.t.Helper()
	r := h.do("POST", "/internal/introspect", map[string]string{"token": token}, anonymous)
	h.expect(r, 200, "")
	m := r.json(h.t)
	var teams []access.Membership
	for _, t := range m["teams"].([]any) {
		t := t.(map[string]any)
		role, _ := access.ParseRole(t["role"].(string))
		teams = append(teams, access.Membership{TeamID: t["id"].(string), Slug: t["slug"].(string), Role: role, Personal: t["personal"].(bool)})
	}
	return &callerid.Caller{AccountID: m["accountId"].(string), UserID: m["userId"].(string),
		TokenKind: m["tokenKind"].(string), TokenID: m["tokenId"].(string), Teams: callerid.EncodeTeams(teams)}
}

// events returns the routing keys in the outbox, in order.
func (h *harness) events() []string {
	h.t.Helper()
	rows, _ := h.pool.Query(context.Background(), `SELECT routing_key FROM outbox ORDER BY seq`)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		h.t.Fatal(err)
	}
	return keys
}

// lastEvent decodes the newest outbox body with routing key key into m.
func (h *harness) lastEvent(key string, m proto.Message) {
	h.t.Helper()
	var body []byte
	err := h.pool.QueryRow(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq DESC LIMIT 1`, key).Scan(&body)
	if err != nil {
		h.t.Fatalf("no %s event: %v", key, err)
	}
	if err := proto.Unmarshal(body, m); err != nil {
		h.t.Fatal(err)
	}
}

// keys lists a JSON object's member names, sorted, to pin a response's exact shape.
func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func (p *fakePlans) answer(plan *account.Plan) {
	p.mu.Lock()
	p.plan = plan
	p.mu.Unlock()
}

func (p *fakePlans) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func (m *fakeMailer) refuse() {
	m.mu.Lock()
	m.fail = true
	m.mu.Unlock()
}
