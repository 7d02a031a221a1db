// Package busapi is the identity service's side of the bus: the consumer that keeps its copy
// of each account's plan, the client that asks billing for a plan it has no copy of yet, and
// the consumer that mails an owner whose custom hostname lost its DNS record.
package busapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/usecase"
)

// PlansQueue is identity's own durable queue for billing's plan changes.
const PlansQueue = "identity.plans"

// PlanConsumer applies billing's plan changes to identity's copy.
type PlanConsumer struct {
	// Repo binds the consumer's transaction to the store, so the copy commits with the
	// record that the message was processed.
	Repo func(tx bus.Tx) usecase.Repo
	Log  *slog.Logger
}

// Subscription is the durable subscription bus.Conn.Consume runs.
func (pc PlanConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: PlansQueue, Keys: []string{billingbus.KeyPlanChanged}, Handle: pc.Handle}
}

// Handle keeps the event's plan if it is newer than the copy. A malformed event will never
// become valid, so it is dead-lettered at once rather than retried.
func (pc PlanConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var ev billingv1.AccountPlanChanged
	if err := d.Decode(&ev); err != nil {
		return bus.Permanent(fmt.Errorf("decode plan_changed: %w", err))
	}
	if uuid.Validate(ev.GetAccountId()) != nil || ev.GetPlan() == "" {
		return bus.Permanent(fmt.Errorf("plan_changed %s: no account id or plan", d.ID))
	}
	p := planFrom(ev.GetPlan(), ev.GetLimits(), ev.GetVersion())
	if ts := ev.GetChangedAt(); ts != nil {
		p.UpdatedAt = ts.AsTime()
	}
	saved, err := usecase.ApplyPlanChange(ctx, pc.Repo(tx), ev.GetAccountId(), p)
	if err != nil {
		return err
	}
	pc.Log.InfoContext(ctx, "plan change", "account_id", ev.GetAccountId(), "plan", p.Name,
		"version", p.Version, "kept", saved)
	return nil
}

func planFrom(name string, l *billingv1.PlanLimits, version int64) account.Plan {
	return account.Plan{
		Name: name,
		Limits: account.Limits{
			MaxCustomDomains:    l.GetCustomDomains(),
			DatabaseConnections: l.GetDatabaseConnections(),
			DatabaseBytes:       l.GetDatabaseBytes(),
			Processes: account.ProcessLimits{
				ProcessTypes:           l.GetProcessTypes(),
				InstancesPerProcess:    l.GetInstancesPerProcess(),
				InstancesTotal:         l.GetInstancesTotal(),
				CronJobs:               l.GetCronJobs(),
				CronMinIntervalMinutes: l.GetCronMinIntervalMinutes(),
				CronTimeoutSeconds:     l.GetCronTimeoutSeconds(),
				InstanceMemoryBytes:    l.GetInstanceMemoryBytes(),
			},
			Members:            l.GetMembers(),
			AuditRetentionDays: l.GetAuditRetentionDays(),
		},
		Version:   version,
		UpdatedAt: time.Now().UTC().Truncate(time.Microsecond),
	}
}
