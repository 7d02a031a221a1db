package busapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
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
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func delivery(t *testing.T, key string, m proto.Message) bus.Delivery {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Body: b, Attempt: 1}
}

// handle runs one handler call in its own committed transaction, as Consume would.
func handle(t *testing.T, db *logstest.DB, h bus.TxHandler, d bus.Delivery) error {
	t.Helper()
	return pgstore.InTx(context.Background(), db.Pool, func(tx pgx.Tx) error { return h(context.Background(), bus.TxOf(tx), d) })
}

func wireEntry(app string, ts time.Time, msg string) *logsv1.LogEntry {
	return &logsv1.LogEntry{AppId: app, Stream: "stdout", Timestamp: timestamppb.New(ts), Message: msg}
}

// A zone's agent writes only into the apps its zone hosts: lines it ships for an app another
// zone hosts are dropped, whoever published them; lines of an app whose zone is not known
// (not heard of yet, or recorded without one) are kept, as before.
func TestIngestTakesAnAppsLinesOnlyFromItsZone(t *testing.T) {
	db := logstest.NewDB(t)
	now := time.Now().UTC()
	ingest := newIngest(db, now)
	apps := busapi.NewApps(db.Store, func() time.Time { return now })

	inEU, inUS, zoneless, unknown := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: inEU, AccountId: testAccount, Slug: "eu", Zone: "eu-1"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: inUS, AccountId: testAccount, Slug: "us", Zone: "us-1"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: zoneless, AccountId: testAccount, Slug: "old"})))

	from := func(publisher string, apps ...string) {
		t.Helper()
		batch := &logsv1.LogBatch{}
		for _, a := range apps {
			batch.Entries = append(batch.Entries, wireEntry(a, now.Add(-time.Minute), "from "+publisher))
		}
		d := delivery(t, zonebus.KeyLogBatch, batch)
		d.Publisher = publisher
		must(t, handle(t, db, ingest.Handle, d))
	}
	from(bus.ZonePrincipal("eu-1"), inEU, inUS, zoneless, unknown)
	from(bus.ZonePrincipal("us-1"), inEU, inUS)
	from(bus.PrincipalApps, inEU, zoneless) // no zone at all: only a test's bus lets it through

	for _, c := range []struct {
		name string
		app  string
		want int
	}{
		{"eu-1's app: its own zone's line only", inEU, 1},
		{"us-1's app: its own zone's line only", inUS, 1},
		{"an app with no zone recorded: every line", zoneless, 2},
		{"an app not heard of yet: kept", unknown, 1},
	} {
		if n := db.Count(t, c.app); n != c.want {
			t.Errorf("%s: %d entries, want %d", c.name, n, c.want)
		}
	}
	var foreign int
	must(t, db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM log_entries WHERE (app_id = $1 AND message <> 'from zone.eu-1') OR (app_id = $2 AND message <> 'from zone.us-1')`,
		inEU, inUS).Scan(&foreign))
	if foreign != 0 {
		t.Fatalf("%d lines stored from a zone that does not host their app", foreign)
	}

	// A repeat of the created event without a zone does not erase the one recorded.
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: inEU, AccountId: testAccount, Slug: "eu"})))
	from(bus.ZonePrincipal("us-1"), inEU)
	if n := db.Count(t, inEU); n != 1 {
		t.Fatalf("eu-1's app after a zoneless repeat of its event: %d entries, want 1", n)
	}
}

func TestIngestKeepsGoodEntriesAndDropsBadOnes(t *testing.T) {
	db := logstest.NewDB(t)
	now := time.Now().UTC()
	ingest := newIngest(db, now)
	apps := busapi.NewApps(db.Store, func() time.Time { return now })

	known, unknown, deleted := uuid.NewString(), uuid.NewString(), uuid.NewString()
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: known, AccountId: testAccount, Slug: "web"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: deleted, AccountId: testAccount, Slug: "gone"})))

	deploy := uuid.NewString()
	batch := &logsv1.LogBatch{Entries: []*logsv1.LogEntry{
		wireEntry(known, now.Add(-time.Minute), "ok"),
		{AppId: known, DeployId: deploy, Stream: "release", Timestamp: timestamppb.New(now.Add(-2 * 24 * time.Hour)), Message: "two days ago, new partition", Redactions: 2},
		wireEntry(known, now.Add(-time.Second), "nul\x00byte"),
		{AppId: known, Stream: "stdout", Timestamp: timestamppb.New(now.Add(-30 * time.Second)), Message: "from worker.2", Process: "worker.2"},
		{AppId: known, Stream: "stdout", Timestamp: timestamppb.New(now.Add(-30 * time.Second)), Message: "bad process: kept without it", Process: "Worker 2"},
		wireEntry(unknown, now.Add(-time.Minute), "app not known yet: kept"),
		wireEntry(deleted, now.Add(-time.Minute), "deleted app: dropped"),
		{AppId: known, Stream: "stdlog", Timestamp: timestamppb.New(now), Message: "bad stream"},
		{AppId: "not-a-uuid", Stream: "stdout", Timestamp: timestamppb.New(now), Message: "bad app"},
		{AppId: known, DeployId: "nope", Stream: "stdout", Timestamp: timestamppb.New(now), Message: "bad deploy"},
		{AppId: known, Stream: "stdout", Message: "no timestamp"},
		wireEntry(known, now.Add(-31*24*time.Hour), "older than any plan keeps"),
		wireEntry(known, now.Add(25*time.Hour), "from the future"),
	}}
	must(t, handle(t, db, ingest.Handle, delivery(t, zonebus.KeyLogBatch, batch)))

	if n := db.Count(t, known); n != 5 {
		t.Fatalf("known app: %d entries, want 5", n)
	}
	if n := db.Count(t, unknown); n != 1 {
		t.Fatalf("unknown app: %d entries, want 1", n)
	}
	if n := db.Count(t, deleted); n != 0 {
		t.Fatalf("deleted app: %d entries, want 0", n)
	}
	var msg string
	must(t, db.Pool.QueryRow(context.Background(), `SELECT message FROM log_entries WHERE message LIKE 'nul%'`).Scan(&msg))
	if strings.ContainsRune(msg, 0) || msg != "nulbyte" {
		t.Fatalf("stored message %q", msg)
	}
	for message, want := range map[string]string{"from worker.2": "worker.2", "bad process: kept without it": "", "ok": ""} {
		var process string
		must(t, db.Pool.QueryRow(context.Background(), `SELECT process FROM log_entries WHERE message = $1`, message).Scan(&process))
		if process != want {
			t.Errorf("line %q stored with process %q, want %q", message, process, want)
		}
	}

	got, err := db.Store.Entries(context.Background(), known, now.Add(-3*24*time.Hour), now.Add(-24*time.Hour), nil, logs.ProcessFilter{}, 10)
	must(t, err)
	if len(got) != 1 || got[0].DeployID != deploy || got[0].Stream != logs.StreamRelease {
		t.Fatalf("entry with deploy: %+v", got)
	}

	err = handle(t, db, ingest.Handle, bus.Delivery{ID: "x", RoutingKey: zonebus.KeyLogBatch, Body: []byte{0xff, 0xff}})
	if !bus.IsPermanent(err) {
		t.Fatalf("undecodable batch: want a permanent error, got %v", err)
	}
}

// An app's deletion waits for every ingest transaction in flight, so no entry of the app can
// commit after the app is marked deleted, and the cleanup finds them all.
func TestDeleteWaitsForIngestInFlight(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ingest := newIngest(db, now)
	apps := busapi.NewApps(db.Store, func() time.Time { return now })
	app := uuid.NewString()
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: app, AccountId: testAccount, Slug: "web"})))

	tx, err := db.Pool.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	must(t, ingest.Handle(ctx, bus.TxOf(tx), delivery(t, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{wireEntry(app, now, "in flight")}})))

	deleted := make(chan error, 1)
	go func() {
		deleted <- handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: app, AccountId: testAccount, Slug: "web"}))
	}()
	// The delete is seen queued behind the ingest's lock, and has not committed meanwhile.
	testinfra.Eventually(t, 10*time.Second, "the delete waiting for the ingest lock", func() bool {
		var waiting bool
		err := db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)`).Scan(&waiting)
		must(t, err)
		return waiting
	})
	select {
	case err := <-deleted:
		t.Fatalf("delete committed while an ingest was in flight: %v", err)
	default:
	}
	must(t, tx.Commit(ctx))
	must(t, <-deleted)

	// Lines arriving after the delete are dropped.
	must(t, handle(t, db, ingest.Handle, delivery(t, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{wireEntry(app, now, "late")}})))
	if n := db.Count(t, app); n != 1 {
		t.Fatalf("%d entries, want only the one committed before the delete", n)
	}
}

func TestAppDeletedBeforeCreatedStaysDeleted(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	apps := busapi.NewApps(db.Store, time.Now)
	app := uuid.NewString()
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: app, AccountId: testAccount, Slug: "web"})))
	must(t, handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: app, AccountId: testAccount, Slug: "web", CreatedAt: timestamppb.Now()})))
	if _, err := db.Store.Target(ctx, testAccount, "web"); !errors.Is(err, logs.ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}

	err := handle(t, db, apps.Handle, delivery(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: "42", AccountId: testAccount, Slug: "x"}))
	if !bus.IsPermanent(err) {
		t.Fatalf("bad app id: want a permanent error, got %v", err)
	}
}

func TestPlanKeepsTheHighestVersion(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	plans := busapi.NewPlans(db.Store, usecase.NewPlans(db.Store, nil, quiet), quiet)
	change := func(version int64, days int64) {
		t.Helper()
		must(t, handle(t, db, plans.Handle, delivery(t, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{
			AccountId: testAccount, Plan: "p", Version: version, Limits: &billingv1.PlanLimits{LogRetentionDays: days},
		})))
	}
	change(2, 7)
	change(1, 30) // late and older: ignored
	days, ok, err := db.Store.PlanRetention(ctx, testAccount)
	if err != nil || !ok || days != 7 {
		t.Fatalf("after an older event: %d %v %v", days, ok, err)
	}
	change(3, 30)
	if days, _, _ := db.Store.PlanRetention(ctx, testAccount); days != 30 {
		t.Fatalf("after a newer event: %d", days)
	}
	if max, _ := db.Store.MaxRetentionDays(ctx); max != 30 {
		t.Fatalf("longest retention %d", max)
	}
}

func newIngest(db *logstest.DB, now time.Time) *busapi.Ingest {
	return busapi.NewIngest(db.Store, usecase.NewIngest(db.Store, quiet, func() time.Time { return now }, func() int { return 30 }))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// testAccount is the account the events name: an id as the services send it, a UUID.
var testAccount = uuid.NewString()
