package busapi

import (
	"context"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/apps/internal/accounts"
)

// Plans asks billing for a plan when no plan_changed event has arrived yet; it is the
// usecase.PlanSource. Its errors wrap billingbus.ErrPlanUnavailable.
type Plans struct {
	Client billingbus.PlanClient
}

// AccountPlan implements usecase.PlanSource.
func (p Plans) AccountPlan(ctx context.Context, accountID string) (accounts.Plan, error) {
	reply, err := p.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return accounts.Plan{}, err
	}
	return planOf(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}

func planOf(name string, l *billingv1.PlanLimits, version int64) accounts.Plan {
	return accounts.Plan{Name: name, Apps: l.GetApps(), CustomDomains: l.GetCustomDomains(), Version: version}
}
