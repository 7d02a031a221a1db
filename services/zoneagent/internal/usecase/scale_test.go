package usecase_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// countingStore is the zone's store, counting the reads of the whole table.
type countingStore struct {
	*store.Store
	routes, domains atomic.Int64
}

func (s *countingStore) Routes(ctx context.Context) ([]revision.Route, error) {
	s.routes.Add(1)
	return s.Store.Routes(ctx)
}

func (s *countingStore) Domains(ctx context.Context) ([]usecase.Domain, error) {
	s.domains.Add(1)
	return s.Store.Domains(ctx)
}

// seedZone records apps live static apps (slug s<i>), a custom hostname for one in twenty,
// and a hold on the account of the first hundred, as the zone's record holds them at scale.
func seedZone(t *testing.T, pool *pgxpool.Pool, apps int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO live (app_id, slug, deploy_id, kind)
			SELECT ('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0')), 's' || i, 'deploy-' || i, 'static' FROM generate_series(1, $1) i`,
		`INSERT INTO domains (hostname, app_id, active, changed_at)
			SELECT 'www.site' || i || '.example', ('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0')), true, now() FROM generate_series(1, $1, 20) i`,
		`INSERT INTO app_accounts (app_id, account_id) SELECT ('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0')), ('10000000-0000-0000-0000-' || lpad(to_hex(i % 2000), 12, '0')) FROM generate_series(1, $1) i`,
		`INSERT INTO account_holds (account_id, serving_stops_from, version) SELECT ('10000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0')), now() + interval '1 day', 1
			FROM generate_series(1, least($1, 100)) i`,
	} {
		if _, err := pool.Exec(ctx, q, apps); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
}

// appID and accountID are the seeded ids.
func appID(i int) string     { return fmt.Sprintf("00000000-0000-0000-0000-%012x", i) }
func accountID(i int) string { return fmt.Sprintf("10000000-0000-0000-0000-%012x", i) }

// handlerOf is the zone's consumer of the queue ending in suffix.
func handlerOf(t *testing.T, a *usecase.Agent, suffix string) bus.TxHandler {
	t.Helper()
	for _, s := range busapi.Subscriptions(a) {
		if strings.HasSuffix(s.Queue, suffix) {
			return s.Handle
		}
	}
	t.Fatalf("no consumer of %s", suffix)
	return nil
}

// At 10,000 apps the table is read whole once, at start: a pass (twice a second, and on
// every poke) reads nothing of it, and a hostname's or a hold's change reaches the edge's
// table by reading that hostname or account alone.
func TestAPassDoesNotReloadTheTable(t *testing.T) {
	const apps = 10_000
	pool := storetest.NewPool(t)
	seedZone(t, pool, apps)
	st := &countingStore{Store: store.New(pool)}
	table := edge.NewTable()
	a, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: st, Artifacts: artifactsFrom(t, st.Store, t.TempDir()), Table: table})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if err := a.ReloadRoutes(ctx); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if _, ok := table.Lookup(fmt.Sprint("s", apps)); !ok {
		t.Fatal("the start did not load the table")
	}
	pass := a.PollJob().Run
	const passes = 20
	start = time.Now()
	for range passes {
		if _, err := pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	perPass := time.Since(start) / passes
	t.Logf("%d apps: start load %v (table %d B/app), a pass %v", apps, loaded.Round(time.Millisecond),
		(after.HeapAlloc-before.HeapAlloc)/apps, perPass.Round(time.Microsecond))
	if n := st.routes.Load(); n != 1 {
		t.Fatalf("the live routes were read %d times in %d passes, want once (at start)", n, passes)
	}

	deliver := func(suffix, key string, m proto.Message) {
		t.Helper()
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Body: body, Attempt: 1}
		h := handlerOf(t, a, suffix)
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return h(ctx, bus.TxOf(tx), d) }); err != nil {
			t.Fatal(err)
		}
	}
	// bus.TxOf runs the after-commit work at once, before the commit: the second look a
	// second later (routing.go) is what brings the table up to date then.
	passUntil := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !done(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not in the table within 5s of passes", what)
			}
			if _, err := pass(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	deliver(".apps", appsbus.KeyDomainActivated, &appsv1.DomainActivated{AppId: appID(7), Hostname: "Shop.Example", ActivatedAt: timestamppb.Now()})
	passUntil("a new hostname", func() bool { r, ok := table.LookupHost("shop.example"); return ok && r.AppID == appID(7) })
	deliver(".apps", appsbus.KeyDomainRemoved, &appsv1.DomainRemoved{AppId: appID(1), Hostname: "www.site1.example", RemovedAt: timestamppb.Now()})
	passUntil("a removed hostname", func() bool { _, ok := table.LookupHost("www.site1.example"); return !ok })
	stopped := time.Now().Add(-time.Minute)
	deliver(".holds", billingbus.KeyHoldChanged, &billingv1.AccountHoldChanged{AccountId: accountID(1999), Active: true,
		ServingStopsFrom: timestamppb.New(stopped), Version: 1, ChangedAt: timestamppb.Now()})
	passUntil("a hold", func() bool { return table.Paused(appID(1999), time.Now()) && table.Paused(appID(3999), time.Now()) })
	if table.Paused(appID(1998), time.Now()) {
		t.Fatal("a hold paused another account's app")
	}
	if n, m := st.routes.Load(), st.domains.Load(); n != 1 || m != 1 {
		t.Fatalf("the changes read the whole table again (routes %d, domains %d times), want only at start", n, m)
	}
}
