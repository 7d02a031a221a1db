package busapi

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/usecase"
)

// A malformed plan_changed can never succeed, so it is dead-lettered at once, not retried.
func TestMalformedPlanChangedIsPermanent(t *testing.T) {
	pc := PlanConsumer{Log: slog.New(slog.DiscardHandler)}
	bad := []proto.Message{
		&billingv1.AccountPlanChanged{Plan: "songbird", Version: 1},                          // no account
		&billingv1.AccountPlanChanged{AccountId: "not-a-uuid", Plan: "songbird", Version: 1}, // bad account
		&billingv1.AccountPlanChanged{AccountId: "0190f5e4-0000-7000-8000-000000000000"},     // no plan
	}
	for i, m := range bad {
		body, _ := proto.Marshal(m)
		if err := pc.Handle(context.Background(), bus.Tx{}, bus.Delivery{Body: body}); !bus.IsPermanent(err) {
			t.Errorf("event %d: want a permanent error, got %v", i, err)
		}
	}
	if err := pc.Handle(context.Background(), bus.Tx{}, bus.Delivery{Body: []byte{0xff, 0xff}}); !bus.IsPermanent(err) {
		t.Errorf("undecodable body: want a permanent error, got %v", err)
	}
}

type fakeRequester struct {
	reply *billingv1.AccountPlanReply
	err   error
	queue string
}

func (f *fakeRequester) Request(_ context.Context, queue string, req, reply proto.Message) error {
	f.queue = queue
	if f.err != nil {
		return f.err
	}
	proto.Merge(reply, f.reply)
	return nil
}

func TestBillingPlans(t *testing.T) {
	f := &fakeRequester{reply: &billingv1.AccountPlanReply{Plan: "flock", Version: 4,
		Limits: &billingv1.PlanLimits{CustomDomains: 50, DatabaseConnections: 100, DatabaseBytes: 10737418240,
			ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40, CronJobs: 50, CronMinIntervalMinutes: 1,
			CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1 << 30}}}
	p, err := BillingPlans{Client: billingbus.PlanClient{Bus: f}}.AccountPlan(context.Background(), "acc")
	if err != nil || f.queue != "billing.rpc.account_plan" {
		t.Fatalf("%v on queue %q", err, f.queue)
	}
	if p.Name != "flock" || p.Version != 4 || p.Limits.MaxCustomDomains != 50 || p.Limits.DatabaseConnections != 100 || p.Limits.DatabaseBytes != 10737418240 {
		t.Fatalf("plan %+v", p)
	}
	if want := (account.ProcessLimits{ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40, CronJobs: 50,
		CronMinIntervalMinutes: 1, CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1 << 30}); p.Limits.Processes != want {
		t.Fatalf("process limits %+v, want %+v", p.Limits.Processes, want)
	}
	// Billing at version 0 for an account it has not recorded: kept, so any event outranks it.
	f = &fakeRequester{reply: &billingv1.AccountPlanReply{Plan: "nestling", Limits: &billingv1.PlanLimits{DatabaseConnections: 5, DatabaseBytes: 268435456}}}
	if p, err := (BillingPlans{Client: billingbus.PlanClient{Bus: f}}).AccountPlan(context.Background(), "acc"); err != nil || p.Name != "nestling" || p.Version != 0 || p.Limits.DatabaseConnections != 5 {
		t.Fatalf("nestling answer: %+v %v", p, err)
	}
	if _, err := (BillingPlans{Client: billingbus.PlanClient{Bus: &fakeRequester{reply: &billingv1.AccountPlanReply{}}}}).AccountPlan(context.Background(), "acc"); !errors.Is(err, usecase.ErrPlanUnavailable) {
		t.Fatalf("an answer without a plan must be app.ErrPlanUnavailable, so the request fails: %v", err)
	}
	_, err = BillingPlans{Client: billingbus.PlanClient{Bus: &fakeRequester{err: bus.ErrTimeout}}}.AccountPlan(context.Background(), "acc")
	if !errors.Is(err, bus.ErrTimeout) || !errors.Is(err, usecase.ErrPlanUnavailable) || !errors.Is(err, billingbus.ErrPlanUnavailable) {
		t.Fatalf("timeout: %v", err)
	}
}
