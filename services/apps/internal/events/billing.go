package events

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/apps/internal/accounts"
)

// QueueAccountPlan is billing's request queue for an account's plan.
const QueueAccountPlan = "billing.rpc.account_plan"

// Requester sends one request and waits for its answer (*bus.Conn).
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// BillingPlans asks billing for a plan when no plan_changed event has arrived yet.
type BillingPlans struct {
	Bus     Requester
	Timeout time.Duration
}

// AccountPlan implements accounts.PlanSource.
func (b BillingPlans) AccountPlan(ctx context.Context, accountID string) (accounts.Plan, error) {
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
	}
	var reply billingv1.AccountPlanReply
	if err := b.Bus.Request(ctx, QueueAccountPlan, &billingv1.AccountPlanRequest{AccountId: accountID}, &reply); err != nil {
		return accounts.Plan{}, err
	}
	if reply.GetPlan() == "" || reply.GetLimits() == nil {
		return accounts.Plan{}, errors.New("billing answered without a plan or limits")
	}
	return planOf(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}
