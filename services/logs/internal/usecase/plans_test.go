package usecase_test

import (
	"context"
	"errors"
	"github.com/google/uuid"
	"io"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
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
	if f.fail || queue != billingbus.QueueAccountPlan {
		return bus.ErrNoResponder
	}
	r := reply.(*billingv1.AccountPlanReply)
	r.Plan, r.Version = "songbird", 0
	r.Limits = &billingv1.PlanLimits{LogRetentionDays: f.days[req.(*billingv1.AccountPlanRequest).GetAccountId()]}
	return nil
}

func plansWith(db *logstest.DB, billing billingbus.Requester) *usecase.Plans {
	return usecase.NewPlans(db.Store, busapi.BillingPlans{Client: billingbus.PlanClient{Bus: billing, Timeout: time.Second}}, quiet)
}

func TestRetentionFromCopyThenBillingElseUnavailable(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	billing := &fakeBilling{days: map[string]int64{"asked": 7}}
	src := plansWith(db, billing)

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
	db.SavePlanVersion(t, logs.Plan{AccountID: "asked", Name: "flock", RetentionDays: 30, Version: 1})
	if days, _ := src.RetentionDays(ctx, "asked"); days != 30 {
		t.Fatalf("after the event: %d", days)
	}

	// Billing away: nothing guesses, and nothing is kept.
	billing.fail = true
	if days, err := src.RetentionDays(ctx, "unknown"); !errors.Is(err, logs.ErrPlanUnavailable) || !errors.Is(err, billingbus.ErrPlanUnavailable) {
		t.Fatalf("billing away: %d %v, want plan unavailable", days, err)
	}
	if _, ok, err := db.Store.PlanRetention(ctx, "unknown"); err != nil || ok {
		t.Fatalf("a copy was kept for an unanswered account: %v %v", ok, err)
	}
	// An answer that keeps no logs is no answer either.
	billing.fail = false
	if _, err := src.RetentionDays(ctx, "no-days"); !errors.Is(err, logs.ErrPlanUnavailable) {
		t.Fatalf("plan without retention: %v, want plan unavailable", err)
	}
}

// The request really reaches a billing responder over the bus.
func TestRetentionAskedOverTheBus(t *testing.T) {
	db := logstest.NewDB(t)
	cfg := logstest.BusConfig(t)
	conn := testinfra.DialBus(t, cfg, quiet)
	testinfra.Background(t, "billing responder", func(ctx context.Context) error {
		return conn.Serve(ctx, billingbus.QueueAccountPlan, func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req billingv1.AccountPlanRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			return &billingv1.AccountPlanReply{Plan: "songbird", Version: 3, Limits: &billingv1.PlanLimits{LogRetentionDays: 7}}, nil
		})
	})
	src := plansWith(db, conn)
	testinfra.Eventually(t, 20*time.Second, "billing answers", func() bool {
		days, _ := src.RetentionDays(context.Background(), uuid.NewString())
		return days == 7
	})
}
