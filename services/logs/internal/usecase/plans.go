package usecase

import (
	"context"
	"fmt"
	"log/slog"

	"tori.dev/services/logs/internal/logs"
)

// Plans answers how many days of logs an account keeps, by the one policy of
// docs/conventions.md ("An account's plan"): the copy fed by billing's events; without one,
// billing's answer, kept as the copy; without that, logs.ErrPlanUnavailable.
type Plans struct {
	store   Store
	billing PlanSource
	log     *slog.Logger
}

// NewPlans builds Plans.
func NewPlans(st Store, billing PlanSource, log *slog.Logger) *Plans {
	return &Plans{store: st, billing: billing, log: log}
}

// RetentionDays implements Retention.
func (p *Plans) RetentionDays(ctx context.Context, accountID string) (int, error) {
	days, ok, err := p.store.PlanRetention(ctx, accountID)
	if err != nil || ok {
		return days, err
	}
	plan, err := p.billing.AccountPlan(ctx, accountID)
	if err != nil {
		p.log.WarnContext(ctx, "billing did not answer the plan", "account_id", accountID, "err", err.Error())
		return 0, err
	}
	if plan.RetentionDays <= 0 {
		return 0, fmt.Errorf("%w: billing's plan %q keeps no logs", logs.ErrPlanUnavailable, plan.Name)
	}
	plan.AccountID = accountID
	// Kept even when the read that asked is cancelled: the answer is as good either way.
	// Its version ranks it against plan_changed events like any other copy.
	keep := context.WithoutCancel(ctx)
	err = p.store.InTx(keep, func(tx Tx) error { return tx.SavePlan(keep, plan) })
	if err != nil {
		p.log.WarnContext(ctx, "keeping billing's plan answer failed", "account_id", accountID, "err", err.Error())
	}
	return plan.RetentionDays, nil
}

// PlanChanged records a plan change from billing unless a newer one is already recorded.
func (p *Plans) PlanChanged(ctx context.Context, tx Tx, plan logs.Plan) error {
	return tx.SavePlan(ctx, plan)
}
