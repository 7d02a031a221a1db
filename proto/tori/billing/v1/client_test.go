package billingbus

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
)

type fakeBilling struct {
	queue string
	reply *billingv1.AccountPlanReply
	err   error
}

func (f *fakeBilling) Request(_ context.Context, queue string, req, reply proto.Message) error {
	f.queue = queue
	if f.err != nil {
		return f.err
	}
	proto.Merge(reply, f.reply)
	return nil
}

func TestAccountPlan(t *testing.T) {
	limits := &billingv1.PlanLimits{Apps: 10}
	for _, tc := range []struct {
		name    string
		billing *fakeBilling
		wantErr bool
	}{
		{"answered", &fakeBilling{reply: &billingv1.AccountPlanReply{Plan: "songbird", Limits: limits, Version: 3}}, false},
		{"no responder", &fakeBilling{err: errors.New("bus: no responder")}, true},
		{"no plan", &fakeBilling{reply: &billingv1.AccountPlanReply{Limits: limits}}, true},
		{"no limits", &fakeBilling{reply: &billingv1.AccountPlanReply{Plan: "songbird"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanClient{Bus: tc.billing}.AccountPlan(context.Background(), "acc")
			if tc.billing.queue != QueueAccountPlan {
				t.Fatalf("asked %q, want %q", tc.billing.queue, QueueAccountPlan)
			}
			if tc.wantErr {
				if !errors.Is(err, ErrPlanUnavailable) {
					t.Fatalf("err = %v, want ErrPlanUnavailable", err)
				}
				return
			}
			if err != nil || got.GetPlan() != "songbird" || got.GetVersion() != 3 || got.GetLimits().GetApps() != 10 {
				t.Fatalf("AccountPlan() = %v, %v", got, err)
			}
		})
	}
}
