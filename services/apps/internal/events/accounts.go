// Package events is the apps service on the bus: the consumers that keep its copy of account
// facts and collect cleanup confirmations, the request/reply responders for environment
// snapshots, and the client that asks billing for a plan.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/store"
)

// Routing keys this service consumes for its account copy.
const (
	KeyAccountCreated   = "identity.account.created"
	KeyAccountUpdated   = "identity.account.updated"
	KeyPlanChanged      = "billing.account.plan_changed"
	QueueAccounts       = "apps.accounts"
	QueueCleanup        = "apps.cleanup"
	KeyCleanupConfirmed = "*.app.cleaned"
)

// AccountsSubscription keeps the account copy: the default region from identity, the plan
// and its limits from billing. Both writes ignore stale events (older region, lower plan
// version), so redelivery and reordering are harmless.
func AccountsSubscription(log *slog.Logger) bus.Subscription {
	return bus.Subscription{
		Queue: QueueAccounts,
		Keys:  []string{KeyAccountCreated, KeyAccountUpdated, KeyPlanChanged},
		Handle: func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
			return HandleAccountEvent(ctx, tx, d, log)
		},
	}
}

// HandleAccountEvent applies one account event in tx.
func HandleAccountEvent(ctx context.Context, tx pgx.Tx, d bus.Delivery, log *slog.Logger) error {
	switch d.RoutingKey {
	case KeyAccountCreated:
		var m identityv1.AccountCreated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		return saveRegion(ctx, tx, log, m.GetAccountId(), m.GetDefaultRegion(), m.GetCreatedAt().AsTime())
	case KeyAccountUpdated:
		var m identityv1.AccountUpdated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		return saveRegion(ctx, tx, log, m.GetAccountId(), m.GetDefaultRegion(), m.GetUpdatedAt().AsTime())
	case KeyPlanChanged:
		var m billingv1.AccountPlanChanged
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		if m.GetAccountId() == "" || m.GetPlan() == "" || m.GetLimits() == nil {
			return bus.Permanent(fmt.Errorf("%s without account, plan or limits", d.RoutingKey))
		}
		return store.SavePlanTx(ctx, tx, m.GetAccountId(), planOf(m.GetPlan(), m.GetLimits(), m.GetVersion()))
	}
	log.WarnContext(ctx, "unexpected routing key on the accounts queue", "routing_key", d.RoutingKey)
	return nil
}

func saveRegion(ctx context.Context, tx pgx.Tx, log *slog.Logger, accountID, region string, at time.Time) error {
	if accountID == "" {
		return bus.Permanent(fmt.Errorf("account event without an account id"))
	}
	if !apps.ValidRegion(region) {
		// A region this service cannot place apps in; new apps keep the previous default.
		log.WarnContext(ctx, "account event with an unknown region ignored", "account_id", accountID, "region", region)
		return nil
	}
	return store.SaveRegionTx(ctx, tx, accountID, region, at)
}

func planOf(name string, l *billingv1.PlanLimits, version int64) accounts.Plan {
	return accounts.Plan{Name: name, Apps: l.GetApps(), CustomDomains: l.GetCustomDomains(), Version: version}
}
