package busapi

import (
	"context"
	"fmt"

	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/usecase"
)

// BillingPlans is usecase.PlanSource over billing's request/reply: billingbus.PlanClient's answer
// as identity's plan copy.
type BillingPlans struct{ Client billingbus.PlanClient }

// AccountPlan implements usecase.PlanSource.
func (b BillingPlans) AccountPlan(ctx context.Context, accountID string) (account.Plan, error) {
	reply, err := b.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return account.Plan{}, fmt.Errorf("%w: %w", usecase.ErrPlanUnavailable, err)
	}
	return planFrom(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}

var _ usecase.PlanSource = BillingPlans{}
