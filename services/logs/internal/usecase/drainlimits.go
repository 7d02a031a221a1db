package usecase

import (
	"context"
	"fmt"

	"tori.dev/services/logs/internal/logs"
)

// DrainLimitSource reads the plan copy's drains per app and the plan's name; ok false when
// the copy has none (no copy, or one recorded before drains).
type DrainLimitSource interface {
	PlanDrains(ctx context.Context, accountID string) (drains int, plan string, ok bool, err error)
}

// DrainLimits answers the plan's drains per app by the same policy as the retention: the copy,
// else billing's answer (kept as the copy), else logs.ErrPlanUnavailable.
type DrainLimits struct {
	Store   Store
	Copy    DrainLimitSource
	Billing PlanSource
}

// DrainLimit is how many drains each of the account's apps may have, and the plan that says so.
func (l DrainLimits) DrainLimit(ctx context.Context, accountID string) (int, string, error) {
	n, name, ok, err := l.Copy.PlanDrains(ctx, accountID)
	if err != nil || ok {
		return n, name, err
	}
	if l.Billing == nil {
		return 0, "", fmt.Errorf("%w: no copy of the plan's drains", logs.ErrPlanUnavailable)
	}
	plan, err := l.Billing.AccountPlan(ctx, accountID)
	if err != nil {
		return 0, "", err
	}
	if plan.RetentionDays <= 0 {
		return 0, "", fmt.Errorf("%w: billing's plan %q has no limits", logs.ErrPlanUnavailable, plan.Name)
	}
	plan.AccountID = accountID
	keep := context.WithoutCancel(ctx)
	_ = l.Store.InTx(keep, func(tx Tx) error { return tx.SavePlan(keep, plan) })
	return plan.Drains, plan.Name, nil
}
