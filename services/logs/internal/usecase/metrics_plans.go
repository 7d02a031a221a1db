package usecase

import (
	"context"
	"fmt"
	"log/slog"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
)

// MetricsPlans answers the metrics' part of an account's plan by the one policy Plans
// follows: the copy fed by billing's events; without one, billing's answer, kept as the copy;
// without that, logs.ErrPlanUnavailable (no guessed retention).
type MetricsPlans struct {
	store   MetricsStore
	billing MetricsPlanSource
	log     *slog.Logger
}

// NewMetricsPlans builds MetricsPlans.
func NewMetricsPlans(st MetricsStore, billing MetricsPlanSource, log *slog.Logger) *MetricsPlans {
	return &MetricsPlans{store: st, billing: billing, log: log}
}

// Plan is accountID's metrics plan.
func (p *MetricsPlans) Plan(ctx context.Context, accountID string) (metrics.Plan, error) {
	plan, ok, err := p.store.MetricsPlan(ctx, accountID)
	if err != nil || ok {
		return plan, err
	}
	if p.billing == nil {
		return metrics.Plan{}, fmt.Errorf("%w: no copy and no billing to ask", logs.ErrPlanUnavailable)
	}
	plan, err = p.billing.MetricsPlan(ctx, accountID)
	if err != nil {
		p.log.WarnContext(ctx, "billing did not answer the plan", "account_id", accountID, "err", err.Error())
		return metrics.Plan{}, err
	}
	if plan.RetentionDays <= 0 {
		return metrics.Plan{}, fmt.Errorf("%w: billing's plan keeps no metrics", logs.ErrPlanUnavailable)
	}
	plan.AccountID = accountID
	keep := context.WithoutCancel(ctx)
	if err := p.store.InMetricsTx(keep, func(tx MetricsTx) error { return tx.SaveMetricsPlan(keep, plan) }); err != nil {
		p.log.WarnContext(ctx, "keeping billing's plan answer failed", "account_id", accountID, "err", err.Error())
	}
	return plan, nil
}

// PlanChanged records a plan change unless a newer one is already recorded.
func (p *MetricsPlans) PlanChanged(ctx context.Context, tx MetricsTx, plan metrics.Plan) error {
	return tx.SaveMetricsPlan(ctx, plan)
}
