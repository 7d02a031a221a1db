package busapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/usecase"
)

// Accounts keeps the account copy: the default region from identity, the plan
// and its limits from billing. Both writes ignore stale events (older region, lower plan
// version), so redelivery and reordering are harmless.
func (c Consumers) Accounts() bus.Subscription {
	return bus.Subscription{
		Queue:  QueueAccounts,
		Keys:   []string{identitybus.KeyAccountCreated, identitybus.KeyAccountUpdated, billingbus.KeyPlanChanged},
		Handle: c.HandleAccountEvent,
	}
}

// HandleAccountEvent applies one account event in tx.
func (c Consumers) HandleAccountEvent(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	switch d.RoutingKey {
	case identitybus.KeyAccountCreated:
		var m identityv1.AccountCreated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		return c.saveRegion(ctx, tx, m.GetAccountId(), m.GetDefaultRegion(), m.GetCreatedAt().AsTime())
	case identitybus.KeyAccountUpdated:
		var m identityv1.AccountUpdated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		return c.saveRegion(ctx, tx, m.GetAccountId(), m.GetDefaultRegion(), m.GetUpdatedAt().AsTime())
	case billingbus.KeyPlanChanged:
		var m billingv1.AccountPlanChanged
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
		}
		if m.GetAccountId() == "" || m.GetPlan() == "" || m.GetLimits() == nil {
			return bus.Permanent(fmt.Errorf("%s without account, plan or limits", d.RoutingKey))
		}
		return usecase.ApplyPlanChange(ctx, c.Tx(tx), m.GetAccountId(), planOf(m.GetPlan(), m.GetLimits(), m.GetVersion()))
	}
	c.Log.WarnContext(ctx, "unexpected routing key on the accounts queue", "routing_key", d.RoutingKey)
	return nil
}

func (c Consumers) saveRegion(ctx context.Context, tx bus.Tx, accountID, region string, at time.Time) error {
	if accountID == "" {
		return bus.Permanent(fmt.Errorf("account event without an account id"))
	}
	err := usecase.ApplyRegionChange(ctx, c.Tx(tx), accountID, region, at)
	if errors.Is(err, apps.ErrInvalidRegion) {
		// A region this service cannot place apps in; new apps keep the previous default.
		c.Log.WarnContext(ctx, "account event with an unknown region ignored", "account_id", accountID, "region", region)
		return nil
	}
	return err
}
