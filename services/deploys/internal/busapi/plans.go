package busapi

import (
	"context"

	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// BillingPlans asks billing for a plan the deploys service has no copy of yet, through the
// one plan client; its errors wrap billingbus.ErrPlanUnavailable.
type BillingPlans struct{ Client billingbus.PlanClient }

// AccountPlan implements usecase.PlanSource.
func (b BillingPlans) AccountPlan(ctx context.Context, accountID string) (usecase.Plan, error) {
	reply, err := b.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return usecase.Plan{}, err
	}
	return planFrom(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}
