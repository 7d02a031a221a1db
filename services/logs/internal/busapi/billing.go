package busapi

import (
	"context"
	"fmt"

	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/logs"
)

// BillingPlans asks billing for an account's plan with the one plan client.
type BillingPlans struct {
	Client billingbus.PlanClient
}

// AccountPlan implements usecase.PlanSource. Its errors wrap both logs.ErrPlanUnavailable and
// billingbus.ErrPlanUnavailable.
func (b BillingPlans) AccountPlan(ctx context.Context, accountID string) (logs.Plan, error) {
	reply, err := b.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return logs.Plan{}, fmt.Errorf("%w: %w", logs.ErrPlanUnavailable, err)
	}
	return logs.Plan{
		AccountID:     accountID,
		Name:          reply.GetPlan(),
		RetentionDays: int(reply.GetLimits().GetLogRetentionDays()),
		Version:       reply.GetVersion(),
		Drains:        int(reply.GetLimits().GetDrains()),
	}, nil
}
