// Package apptest runs the apps service's use cases and HTTP handlers in-process for tests,
// without a bus: a database of the test's own (pkg/testinfra), a local keyring in a
// temporary folder, a plan source the test controls, messages delivered to the consumers as
// the bus would, and requests signed as the gateway would. Whole-service tests use
// testinfra.Service in cmd/apps instead.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/busapi"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/httpapi"
	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/store"
	"tori.dev/services/apps/internal/usecase"
)

// Database returns the admin URL of a fresh, migrated database for t.
func Database(t testing.TB) string {
	t.Helper()
	return testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
}

// Pool connects to the database as the apps role.
func Pool(t testing.TB, adminURL string) *pgxpool.Pool {
	t.Helper()
	return testinfra.OpenServicePool(t, adminURL, store.Service(""))
}

// Environment is the environment of a service under test: env over a signing key, a data
// folder of the test's own and a database URL that names none, so a test must name its own.
func Environment(t testing.TB, env map[string]string) map[string]string {
	t.Helper()
	m := map[string]string{
		"GATEWAY_SIGNING_KEY": "test-signing-key",
		"DATA_DIR":            t.TempDir(),
		"DATABASE_URL":        "postgres://apptest-database-not-set.invalid:1/none",
		"APPS_DATABASE_URL":   "postgres://apptest-database-not-set.invalid:1/none",
		"APPS_AMQP_URL":       "amqp://apptest-broker-not-set.invalid:1/",
	}
	for k, v := range env {
		m[k] = v
	}
	return m
}

// Config is a configuration for tests, loaded the way the binary loads it so defaults match.
func Config(t testing.TB, env map[string]string) config.Config {
	t.Helper()
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, Environment(t, env)); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Plans is a plan source the test controls: billing's answer for accounts whose plan no
// event brought. The default answer is nestling at version 0, as billing gives it.
type Plans struct {
	mu    sync.Mutex
	Fail  error
	Asked int
}

// AccountPlan implements usecase.PlanSource.
func (p *Plans) AccountPlan(context.Context, string) (accounts.Plan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Asked++
	if p.Fail != nil {
		return accounts.Plan{}, p.Fail
	}
	return accounts.Plan{Name: "nestling", Apps: 3, CustomDomains: 0, Version: 0}, nil
}

// Service is one in-process apps service.
type Service struct {
	t        testing.TB
	Cfg      config.Config
	AdminURL string
	Pool     *pgxpool.Pool
	Store    *store.Store
	Keyring  keyring.Keyring
	Services usecase.Services
	Plans    *Plans
	// Hosting answers for the deploys service: which zone hosts which deploy.
	Hosting *Hosting
	HTTP    *fiber.App
	Logs    *testinfra.LogBuffer
	Log     *slog.Logger
	// Consumers are the bus consumers, for Deliver.
	Consumers busapi.Consumers
	env       map[string]string
}

// Env is the environment Cfg was loaded from.
func (s *Service) Env() map[string]string { return maps.Clone(s.env) }

// Options adjust New.
type Options struct {
	Env     map[string]string // configuration variables
	Keyring keyring.Keyring   // default: a local keyring under the config's DATA_DIR
}

// New starts an apps service for t.
func New(t testing.TB, opts Options) *Service {
	t.Helper()
	s := &Service{t: t, Plans: &Plans{}, Hosting: &Hosting{}, Logs: &testinfra.LogBuffer{}}
	s.AdminURL = Database(t)
	s.env = Environment(t, opts.Env)
	// The test's own database, so commands run with s.Env (rotate-keys) touch nothing else.
	s.env["DATABASE_URL"] = s.AdminURL
	own, err := pgstore.ServiceURL(s.AdminURL, store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	s.env["APPS_DATABASE_URL"] = own
	s.Cfg = Config(t, s.env)
	s.Pool = Pool(t, s.AdminURL)
	s.Store = store.New(s.Pool)
	s.Log = logging.New("apps", s.Logs)
	s.Keyring = opts.Keyring
	if s.Keyring == nil {
		s.Keyring = OpenKeyring(t, s.Cfg, s.Store)
	}
	s.Services = usecase.New(usecase.Deps{
		Store: s.Store, Keyring: s.Keyring, Plans: s.Plans, Hosting: s.Hosting,
		Zones: s.Cfg.Zones(), Cleanup: s.Cfg.Cleanup(), AppsDomain: s.Cfg.AppsDomain,
	})
	s.Consumers = busapi.Consumers{Tx: store.Bind, Log: s.Log, CleanupFrom: s.Cfg.Cleanup()}
	s.HTTP = httpapi.New(httpapi.Deps{
		Apps: s.Services.Apps, Env: s.Services.Env, Domains: s.Services.Domains,
		Gate:       accessgate.New(s.Services.Apps.TeamOf, accessgate.Publisher("apps"), s.Pool, s.Log),
		AppsDomain: s.Cfg.AppsDomain, SigningKey: []byte(s.Cfg.SigningKey),
		Health: health.NewIdentity("apps", "test"), Log: s.Log,
	})
	return s
}

// OpenKeyring opens the keyring cfg names (Vault transit or the local file) as the service does.
func OpenKeyring(t testing.TB, cfg config.Config, st *store.Store) keyring.Keyring {
	t.Helper()
	used, err := st.UsedKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Open(context.Background(), keyring.OptionsFor(cfg), used)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// NewAccount returns a fresh account id.
func NewAccount() string { return uuid.Must(uuid.NewV7()).String() }

// Response is an answer to Do.
type Response struct {
	Status int
	Body   []byte
}

// JSON decodes the body.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as an object.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends a request signed for account (unsigned when account is "-"), which acts as the
// owner of its personal team. body is sent as it is when a string or []byte, else
// JSON-encoded; nil sends no body.
func (s *Service) Do(account, method, path string, body any) Response {
	s.t.Helper()
	if account == "-" {
		return s.DoAs(nil, method, path, body)
	}
	return s.DoAs(&callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession}, method, path, body)
}

// DoAs is Do for a caller the test describes whole (teams, scope, pinned apps); nil sends
// the request unsigned.
func (s *Service) DoAs(caller *callerid.Caller, method, path string, body any) Response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if caller != nil {
		callerid.Sign([]byte(s.Cfg.SigningKey), req.Header.Set, *caller, method, req.Host, path, time.Now())
	}
	resp, err := s.HTTP.Test(req, 30_000)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: b}
}

// Must is Do that fails the test unless the status is want.
func (s *Service) Must(want int, account, method, path string, body any) Response {
	s.t.Helper()
	r := s.Do(account, method, path, body)
	if r.Status != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// Deliver runs a consumer handler on one message, in a transaction, as the bus would.
func (s *Service) Deliver(h func(ctx context.Context, tx bus.Tx, d bus.Delivery) error, key string, m proto.Message) {
	s.t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	d := bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Type: string(m.ProtoReflect().Descriptor().FullName()), Body: body, Attempt: 1}
	ctx := context.Background()
	if err := pgstore.InTx(ctx, s.Pool, func(tx pgx.Tx) error { return h(ctx, bus.TxOf(tx), d) }); err != nil {
		s.t.Fatalf("deliver %s: %v", key, err)
	}
}

// The catalog's limits (docs/conventions.md), for tests that set a plan.
var planLimits = map[string][2]int64{"nestling": {3, 0}, "songbird": {10, 5}, "flock": {50, 50}}

// SetPlan delivers billing.account.plan_changed for the account.
func (s *Service) SetPlan(account, plan string, version int64) {
	s.t.Helper()
	l, ok := planLimits[plan]
	if !ok {
		s.t.Fatalf("unknown plan %q", plan)
	}
	s.Deliver(s.Consumers.HandleAccountEvent, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{
		AccountId: account, Plan: plan, Version: version,
		Limits: &billingv1.PlanLimits{Apps: l[0], CustomDomains: l[1]},
	})
}

// SetRegion delivers identity.account.updated for the account.
func (s *Service) SetRegion(account, region string) {
	s.t.Helper()
	s.Deliver(s.Consumers.HandleAccountEvent, identitybus.KeyAccountUpdated, &identityv1.AccountUpdated{
		AccountId: account, DefaultRegion: region, UpdatedAt: timestamppb.Now(),
	})
}

// CreateApp creates an app and returns its JSON.
func (s *Service) CreateApp(account string, body any) map[string]any {
	s.t.Helper()
	return s.Must(http.StatusCreated, account, http.MethodPost, "/api/apps", body).Map(s.t)
}

// OutboxKeys lists the routing keys of the events written to the outbox, oldest first,
// leaving out audit entries (AuditEntries has those).
func (s *Service) OutboxKeys() []string {
	s.t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT routing_key FROM outbox WHERE routing_key <> $1 ORDER BY seq`, AuditKey)
	if err != nil {
		s.t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		s.t.Fatal(err)
	}
	return keys
}

// AuditKey is the routing key of the apps service's audit entries.
var AuditKey = auditbus.Key("apps")

// AuditEntries decodes the audit entries written to the outbox, oldest first.
func (s *Service) AuditEntries() []*auditv1.EntryRecorded {
	s.t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, AuditKey)
	if err != nil {
		s.t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		s.t.Fatal(err)
	}
	out := make([]*auditv1.EntryRecorded, 0, len(bodies))
	for _, b := range bodies {
		e := &auditv1.EntryRecorded{}
		if err := proto.Unmarshal(b, e); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}
