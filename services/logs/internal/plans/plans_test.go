package plans_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/plans"
	"tori.dev/services/logs/internal/store"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeBilling answers plan requests from a map, or fails.
type fakeBilling struct {
	days  map[string]int64
	fail  bool
	asked int
}

func (f *fakeBilling) Request(_ context.Context, queue string, req, reply proto.Message) error {
	f.asked++
	if f.fail || queue != plans.QueueAccountPlan {
		return bus.ErrNoResponder
	}
	r := reply.(*billingv1.AccountPlanReply)
	r.Plan, r.Version = "songbird", 0
	r.Limits = &billingv1.PlanLimits{LogRetentionDays: f.days[req.(*billingv1.AccountPlanRequest).GetAccountId()]}
	return nil
}

func TestRetentionFromCopyThenBillingThenDefault(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	billing := &fakeBilling{days: map[string]int64{"asked": 7}}
	src := plans.NewSource(db.Store, billing, time.Second, 1, quiet)

	db.SavePlan(t, "copied", 30)
	if days, err := src.RetentionDays(ctx, "copied"); err != nil || days != 30 || billing.asked != 0 {
		t.Fatalf("own copy: %d %v (billing asked %d times)", days, err, billing.asked)
	}
	if days, err := src.RetentionDays(ctx, "asked"); err != nil || days != 7 {
		t.Fatalf("billing's answer: %d %v", days, err)
	}
	if days, _ := src.RetentionDays(ctx, "asked"); days != 7 || billing.asked != 1 {
		t.Fatalf("the answer is kept: %d, asked %d times", days, billing.asked)
	}
	// Billing's version 0 loses to any plan_changed event.
	if err := db.Store.SavePlan(ctx, db.Pool, store.Plan{AccountID: "asked", Name: "flock", RetentionDays: 30, Version: 1}); err != nil {
		t.Fatal(err)
	}
	if days, _ := src.RetentionDays(ctx, "asked"); days != 30 {
		t.Fatalf("after the event: %d", days)
	}

	billing.fail = true
	if days, err := src.RetentionDays(ctx, "unknown"); err != nil || days != 1 {
		t.Fatalf("billing away: %d %v, want the default", days, err)
	}
}

// The request really reaches a billing responder over the bus.
func TestRetentionAskedOverTheBus(t *testing.T) {
	db := logstest.NewDB(t)
	cfg := logstest.BusConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := bus.Dial(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	served := make(chan error, 1)
	go func() {
		served <- conn.Serve(ctx, plans.QueueAccountPlan, func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req billingv1.AccountPlanRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			return &billingv1.AccountPlanReply{Plan: "songbird", Version: 3, Limits: &billingv1.PlanLimits{LogRetentionDays: 7}}, nil
		})
	}()
	src := plans.NewSource(db.Store, conn, 2*time.Second, 1, quiet)
	logstest.Eventually(t, 20*time.Second, "billing answers", func() (bool, error) {
		days, err := src.RetentionDays(ctx, "acc")
		return days == 7, err
	})
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
