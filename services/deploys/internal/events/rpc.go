package events

import (
	"context"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/deploys/internal/service"
)

// QueueAccountPlan is billing's request queue for an account's plan.
const QueueAccountPlan = "billing.rpc.account_plan"

// BillingPlans asks billing for a plan the deploys service has no copy of yet.
type BillingPlans struct{ Conn *bus.Conn }

// AccountPlan implements service.PlanSource.
func (b BillingPlans) AccountPlan(ctx context.Context, accountID string) (service.Plan, error) {
	var reply billingv1.AccountPlanReply
	if err := b.Conn.Request(ctx, QueueAccountPlan, &billingv1.AccountPlanRequest{AccountId: accountID}, &reply); err != nil {
		return service.Plan{}, err
	}
	return planFrom(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}
