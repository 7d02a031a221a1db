package busapi

import (
	"context"
	"fmt"
	"log/slog"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// Plans consumes billing's plan changes into the service's copy of each account's plan.
type Plans struct {
	txs   Transactions
	plans *usecase.Plans
	log   *slog.Logger
}

// NewPlans builds the billing.account.plan_changed consumer.
func NewPlans(txs Transactions, plans *usecase.Plans, log *slog.Logger) *Plans {
	return &Plans{txs: txs, plans: plans, log: log}
}

// Subscription is the durable consumer of plan changes.
func (p *Plans) Subscription() bus.Subscription {
	return bus.Subscription{Queue: QueuePlans, Keys: []string{billingbus.KeyPlanChanged}, Handle: p.Handle}
}

// Handle records a plan change unless a newer one is already recorded.
func (p *Plans) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var m billingv1.AccountPlanChanged
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode AccountPlanChanged: %w", err))
	}
	days := m.GetLimits().GetLogRetentionDays()
	if m.GetAccountId() == "" || days <= 0 {
		// Nothing usable to record; retrying would not make it usable.
		p.log.WarnContext(ctx, "plan change without account or log retention ignored",
			"message_id", d.ID, "account_id", m.GetAccountId(), "plan", m.GetPlan())
		return nil
	}
	return p.plans.PlanChanged(ctx, p.txs.Bind(tx), logs.Plan{
		AccountID: m.GetAccountId(), Name: m.GetPlan(), RetentionDays: int(days), Version: m.GetVersion(),
		Drains: int(m.GetLimits().GetDrains()),
	})
}
