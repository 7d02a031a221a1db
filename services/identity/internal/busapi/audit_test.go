package busapi_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
)

func TestAuditConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.New(t)
	c := busapi.AuditConsumer{Repo: store.Bind, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	sub := c.Subscription()
	if sub.Queue != "identity.audit" || len(sub.Keys) != 5 || sub.Keys[0] != "apps.audit.recorded" || sub.Keys[4] != "logs.audit.recorded" {
		t.Fatalf("subscription %+v", sub)
	}
	deliver := func(m *auditv1.EntryRecorded) error {
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: "apps.audit.recorded", Publisher: "apps", Body: body, Attempt: 1}
		return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) })
	}
	team := uuid.NewString()
	good := &auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: team, At: timestamppb.New(time.Now()), ActorType: "token",
		TokenId: uuid.NewString(), Action: "env.set", Target: "apps/web/env", App: "web", Outcome: "denied",
		Metadata: map[string]string{"keys": "A"}}
	// A redelivery (another message id, the same entry) records nothing more.
	for range 3 {
		if err := deliver(good); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM audit_entries WHERE team_id = $1`, team).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d entries, %v", n, err)
	}

	bad := func(mut func(e *auditv1.EntryRecorded)) *auditv1.EntryRecorded {
		e := proto.Clone(good).(*auditv1.EntryRecorded)
		e.EntryId = uuid.NewString()
		mut(e)
		return e
	}
	for name, e := range map[string]*auditv1.EntryRecorded{
		"no entry id":  bad(func(e *auditv1.EntryRecorded) { e.EntryId = "" }),
		"no team":      bad(func(e *auditv1.EntryRecorded) { e.TeamId = "" }),
		"no time":      bad(func(e *auditv1.EntryRecorded) { e.At = nil }),
		"no action":    bad(func(e *auditv1.EntryRecorded) { e.Action = "" }),
		"odd outcome":  bad(func(e *auditv1.EntryRecorded) { e.Outcome = "maybe" }),
		"odd actor":    bad(func(e *auditv1.EntryRecorded) { e.ActorType = "robot" }),
		"bad token id": bad(func(e *auditv1.EntryRecorded) { e.TokenId = "svc_secret" }),
		"bad user id":  bad(func(e *auditv1.EntryRecorded) { e.UserId = "x" }),
		"bad entry id": bad(func(e *auditv1.EntryRecorded) { e.EntryId = "1" }),
		"bad team id":  bad(func(e *auditv1.EntryRecorded) { e.TeamId = "acme" }),
	} {
		if err := deliver(e); !bus.IsPermanent(err) {
			t.Errorf("%s: want a permanent error, got %v", name, err)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM audit_entries`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d entries after refusals, %v", n, err)
	}
}

// The plan copy keeps the plan's audit retention, which the log's reads and prune use.
func TestPlanChangeKeepsAuditRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, pool := storetest.New(t)
	pc := busapi.PlanConsumer{Repo: store.Bind, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	team := uuid.NewString()
	deliver := func(version, days int64) {
		body, _ := proto.Marshal(&billingv1.AccountPlanChanged{AccountId: team, Plan: "songbird", Version: version,
			Limits: &billingv1.PlanLimits{ProcessTypes: 4, AuditRetentionDays: days}})
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: "billing.account.plan_changed", Body: body, Attempt: 1}
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return pc.Handle(ctx, bus.TxOf(tx), d) }); err != nil {
			t.Fatal(err)
		}
	}
	deliver(2, 30)
	deliver(1, 365) // older: not kept
	if days, err := st.AuditRetentionDays(ctx, team); err != nil || days != 30 {
		t.Fatalf("retention %d, %v", days, err)
	}
}
