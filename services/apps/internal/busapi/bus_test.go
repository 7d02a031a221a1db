package busapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	logsbus "tori.dev/proto/tori/logs/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/busapi"
)

// The apps service's bus side against a real broker: account facts arrive by events, the
// delete event leaves through the outbox, a cleanup confirmation reclaims the slug, and the
// env snapshot pair answers over request/reply.
func TestBusConsumersRelayAndResponders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := apptest.New(t, apptest.Options{Env: map[string]string{"APPS_CLEANUP_SERVICES": "logs"}})
	cfg := busConfig(t)
	conn := testinfra.DialBus(t, cfg, s.Log)
	// One message at a time, in order: the account events below rely on a later marker
	// having been handled after every earlier event.
	accountsSub := s.Consumers.Accounts()
	accountsSub.Prefetch = 1
	testinfra.Background(t, "accounts consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, s.Pool, accountsSub)
	})
	testinfra.Background(t, "cleanup consumer", func(ctx context.Context) error {
		return conn.Consume(ctx, s.Pool, s.Consumers.Cleanup())
	})
	testinfra.Background(t, "relay", bus.NewRelay(conn, s.Pool, s.Log).Run)
	testinfra.Background(t, "snapshot", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvSnapshot, busapi.EnvSnapshot(s.Services.Env))
	})
	testinfra.Background(t, "open", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvOpen, busapi.EnvOpen(s.Services.Env))
	})
	testinfra.Background(t, "same", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvSame, busapi.EnvSame(s.Services.Env))
	})
	testinfra.Background(t, "app lookup", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueAppLookup, busapi.AppLookup(s.Services.Apps))
	})
	lookup := appsbus.AppClient{Bus: conn}
	deleted := make(chan *appsv1.AppDeleted, 1)
	testinfra.Background(t, "edge listener", func(ctx context.Context) error {
		return conn.Listen(ctx, []string{appsbus.KeyAppDeleted}, func(_ context.Context, d bus.Delivery) error {
			var m appsv1.AppDeleted
			if err := d.Decode(&m); err != nil {
				return err
			}
			select {
			case deleted <- &m:
			default:
			}
			return nil
		})
	})
	apptest.WaitQueue(t, cfg, appsbus.QueueEnvSame)
	apptest.WaitQueue(t, cfg, appsbus.QueueEnvOpen)
	apptest.WaitQueue(t, cfg, busapi.QueueAccounts)
	apptest.WaitQueue(t, cfg, busapi.QueueCleanup)

	// Other services' facts, published through an outbox as their owners would.
	publish := func(key string, m proto.Message) {
		t.Helper()
		if err := pgstore.InTx(ctx, s.Pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, key, m) }); err != nil {
			t.Fatal(err)
		}
	}
	acct := apptest.NewAccount()
	publish(identitybus.KeyAccountCreated, &identityv1.AccountCreated{AccountId: acct, DefaultRegion: "us", CreatedAt: timestamppb.Now()})
	publish(billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: acct, Plan: "flock", Version: 2, Limits: &billingv1.PlanLimits{Apps: 50, CustomDomains: 50}})
	publish(billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{AccountId: acct, Plan: "nestling", Version: 1, Limits: &billingv1.PlanLimits{Apps: 3}})
	// A marker behind the stale version-1 event on the same queue: once it is kept, the
	// stale event has been handled too.
	marker := apptest.NewAccount()
	publish(identitybus.KeyAccountCreated, &identityv1.AccountCreated{AccountId: marker, DefaultRegion: "us", CreatedAt: timestamppb.Now()})
	testinfra.Eventually(t, 10*time.Second, "account copy and the marker behind it", func() bool {
		a, err := s.Store.Account(ctx, acct)
		m, merr := s.Store.Account(ctx, marker)
		return err == nil && merr == nil && a.DefaultRegion == "us" && a.Plan != nil && m.DefaultRegion == "us"
	})
	if a, _ := s.Store.Account(ctx, acct); a.Plan.Name != "flock" || a.Plan.Version != 2 {
		t.Fatalf("a stale plan event won: %+v", a.Plan)
	}
	if s.Plans.Asked != 0 {
		t.Fatal("billing was asked although its event had come")
	}
	app := s.CreateApp(acct, map[string]any{"name": "bus-app", "kind": "service"})
	if app["region"] != "us" {
		t.Fatalf("region from identity's event: %v", app["region"])
	}
	appID := app["id"].(string)
	d1, d2, rollback := uuid.NewString(), uuid.NewString(), uuid.NewString()

	// The lookup answers the owner with the app as apps.app.created carried it, and anyone
	// else (or a slug nobody has) with nothing.
	found, err := lookup.Lookup(ctx, acct, "bus-app")
	if err != nil || found == nil {
		t.Fatalf("owner's lookup: %v, %v", found, err)
	}
	if found.AppId != appID || found.AccountId != acct || found.Slug != "bus-app" || found.Kind != "service" ||
		found.Region != "us" || found.CreatedAt == nil {
		t.Fatalf("looked-up app %v", found)
	}
	for _, q := range [][2]string{{apptest.NewAccount(), "bus-app"}, {acct, "no-such-app"}, {"", "bus-app"}, {acct, "Not A Slug"}} {
		if got, err := lookup.Lookup(ctx, q[0], q[1]); err != nil || got != nil {
			t.Errorf("lookup %q/%q = %v, %v; want nothing", q[0], q[1], got, err)
		}
	}
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/bus-app/env", map[string]any{"key": "SECRET", "value": "over-the-bus"})

	// env snapshot and open, by request/reply: the zone that hosts the deploy opens its
	// snapshot, and nobody else does.
	var snap appsv1.EnvSnapshotReply
	if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: d1}, &snap); err != nil {
		t.Fatal(err)
	}
	s.Hosting.Host("local", appID, d1, d1)
	s.Hosting.Host("local", appID, rollback, d1)
	s.Hosting.Host("local", appID, d2, d2)
	open := func(from *bus.Conn, req *appsv1.EnvOpenRequest) (map[string]string, string) {
		t.Helper()
		var r appsv1.EnvOpenReply
		var re *bus.RemoteError
		err := from.Request(ctx, appsbus.QueueEnvOpen, req, &r)
		if errors.As(err, &re) {
			return nil, re.Code
		}
		if err != nil {
			t.Fatal(err)
		}
		return r.Vars, ""
	}
	zoneLocal, zoneOther, deploys := testinfra.DialBusAs(t, cfg, bus.ZonePrincipal("local"), nil), testinfra.DialBusAs(t, cfg, bus.ZonePrincipal("other"), nil), testinfra.DialBusAs(t, cfg, bus.PrincipalDeploys, nil)
	sealed := func(deployID, revision string) *appsv1.EnvOpenRequest {
		return &appsv1.EnvOpenRequest{AppId: appID, DeployId: deployID, RevisionDeployId: revision, Sealed: snap.Sealed, KeyId: snap.KeyId}
	}
	for _, c := range []struct {
		name string
		from *bus.Conn
		req  *appsv1.EnvOpenRequest
		code string
	}{
		{"the hosting zone, its deploy", zoneLocal, sealed(d1, d1), ""},
		{"the hosting zone, a rollback reusing the snapshot", zoneLocal, sealed(d1, rollback), ""},
		{"the hosting zone, revision unnamed (an older agent)", zoneLocal, sealed(d1, ""), ""},
		{"another zone", zoneOther, sealed(d1, d1), "forbidden"},
		{"a service", deploys, sealed(d1, d1), "forbidden"},
		{"a deploy not hosted", zoneLocal, sealed(d1, uuid.NewString()), "forbidden"},
		{"a hosted deploy with another deploy's snapshot", zoneLocal, sealed(d1, d2), "forbidden"},
		{"a snapshot that was not sealed for that deploy", zoneLocal, sealed(d2, d2), "invalid_snapshot"},
		{"an altered snapshot", zoneLocal, &appsv1.EnvOpenRequest{AppId: appID, DeployId: d1, RevisionDeployId: d1, Sealed: append([]byte{}, snap.Sealed[:len(snap.Sealed)-1]...), KeyId: snap.KeyId}, "invalid_snapshot"},
	} {
		vars, code := open(c.from, c.req)
		if code != c.code {
			t.Errorf("%s: refusal %q, want %q", c.name, code, c.code)
			continue
		}
		if c.code == "" && (vars["SECRET"] != "over-the-bus" || len(vars) != 1) {
			t.Errorf("%s: opened %v", c.name, vars)
		}
	}
	// Two snapshots compared for the deploys service, which never sees a value.
	var again appsv1.EnvSnapshotReply
	if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: d2}, &again); err != nil {
		t.Fatal(err)
	}
	var same appsv1.EnvSameReply
	if err := deploys.Request(ctx, appsbus.QueueEnvSame, &appsv1.EnvSameRequest{AppId: appID,
		A: &appsv1.SealedEnv{DeployId: d1, Sealed: snap.Sealed, KeyId: snap.KeyId},
		B: &appsv1.SealedEnv{DeployId: d2, Sealed: again.Sealed, KeyId: again.KeyId}}, &same); err != nil || !same.Same {
		t.Errorf("two snapshots of one environment: same=%v, %v", same.Same, err)
	}
	s.Must(http.StatusOK, acct, http.MethodPut, "/api/apps/bus-app/env", map[string]any{"key": "SECRET", "value": "changed"})
	if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: d2}, &again); err != nil {
		t.Fatal(err)
	}
	if err := deploys.Request(ctx, appsbus.QueueEnvSame, &appsv1.EnvSameRequest{AppId: appID,
		A: &appsv1.SealedEnv{DeployId: d1, Sealed: snap.Sealed, KeyId: snap.KeyId},
		B: &appsv1.SealedEnv{DeployId: d2, Sealed: again.Sealed, KeyId: again.KeyId}}, &same); err != nil || same.Same {
		t.Errorf("snapshots of a changed environment: same=%v, %v", same.Same, err)
	}
	var re *bus.RemoteError
	if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: uuid.NewString(), DeployId: uuid.NewString()}, &snap); !errors.As(err, &re) || re.Code != "not_found" {
		t.Errorf("unknown app: %v", err)
	}

	// Delete: the event leaves through the outbox and relay.
	s.Must(http.StatusOK, acct, http.MethodDelete, "/api/apps/bus-app", nil)
	select {
	case m := <-deleted:
		if m.AppId != appID || m.AccountId != acct || m.Slug != "bus-app" || m.DeletedAt == nil {
			t.Fatalf("AppDeleted %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apps.app.deleted never reached the bus")
	}
	if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: uuid.NewString()}, &snap); !errors.As(err, &re) || re.Code != "not_found" {
		t.Errorf("snapshot of a deleted app: %v", err)
	}
	if got, err := lookup.Lookup(ctx, acct, "bus-app"); err != nil || got != nil {
		t.Errorf("lookup of a deleted app = %v, %v", got, err)
	}
	other := apptest.NewAccount()
	if r := s.Do(other, http.MethodPost, "/api/apps", map[string]any{"name": "bus-app"}); r.Status != http.StatusConflict {
		t.Fatalf("slug before cleanup: %d", r.Status)
	}
	publish(logsbus.KeyAppCleaned, &appsv1.AppCleanupConfirmed{AppId: appID, Service: "logs", ConfirmedAt: timestamppb.Now()})
	testinfra.Eventually(t, 10*time.Second, "slug reclaimed", func() bool {
		return s.Do(other, http.MethodPost, "/api/apps", map[string]any{"name": "bus-app"}).Status == http.StatusCreated
	})
}

// When no plan event has come, billing is asked over request/reply, through the one plan
// client.
func TestPlansAskBillingsQueue(t *testing.T) {
	t.Parallel()
	cfg := busConfig(t)
	conn := testinfra.DialBus(t, cfg, nil)
	testinfra.Background(t, "fake billing", func(ctx context.Context) error {
		return conn.Serve(ctx, billingbus.QueueAccountPlan, func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req billingv1.AccountPlanRequest
			if err := d.Decode(&req); err != nil || req.AccountId == "" {
				return nil, bus.Reject("bad_request", "no account")
			}
			return &billingv1.AccountPlanReply{Plan: "songbird", Version: 0, Limits: &billingv1.PlanLimits{Apps: 10, CustomDomains: 5}}, nil
		})
	})
	plans := busapi.Plans{Client: billingbus.PlanClient{Bus: conn, Timeout: 3 * time.Second}}
	var p struct {
		name          string
		apps, domains int64
	}
	testinfra.Eventually(t, 10*time.Second, "billing's answer", func() bool {
		got, err := plans.AccountPlan(context.Background(), uuid.NewString())
		p.name, p.apps, p.domains = got.Name, got.Apps, got.CustomDomains
		return err == nil
	})
	if p.name != "songbird" || p.apps != 10 || p.domains != 5 {
		t.Fatalf("plan %+v", p)
	}
}

// Billing not answering is billingbus.ErrPlanUnavailable, which the use cases turn into a
// 503 rather than a guess.
func TestPlansUnavailableWithoutBilling(t *testing.T) {
	t.Parallel()
	conn := testinfra.DialBus(t, busConfig(t), nil)
	plans := busapi.Plans{Client: billingbus.PlanClient{Bus: conn, Timeout: 200 * time.Millisecond}}
	if _, err := plans.AccountPlan(context.Background(), uuid.NewString()); !errors.Is(err, billingbus.ErrPlanUnavailable) {
		t.Fatalf("no billing: %v", err)
	}
}

// busConfig is testinfra's bus configuration with the request timeout the apps tests use.
func busConfig(t testing.TB) bus.Config {
	cfg := testinfra.BusConfig(t)
	cfg.RequestTimeout = 3 * time.Second
	return cfg
}
