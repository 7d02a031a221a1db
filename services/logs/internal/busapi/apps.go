package busapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// Apps consumes the apps' lives.
type Apps struct {
	txs  Transactions
	apps usecase.Apps
	now  func() time.Time
}

// NewApps builds the apps.app.* consumer.
func NewApps(txs Transactions, now func() time.Time) *Apps {
	return &Apps{txs: txs, now: now}
}

// Subscription is the durable consumer of the apps' lives, batched: the copy must keep up
// with a burst of creates, and a commit for each one cost the apps service a quarter of its
// creates a second on the machine they share (docs/performance.md).
func (a *Apps) Subscription() bus.Subscription {
	return bus.Subscription{Queue: QueueApps, Keys: []string{appsbus.KeyAppCreated, appsbus.KeyAppDeleted}, Handle: a.Handle, Batch: true}
}

// Handle applies one apps event.
func (a *Apps) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	switch d.RoutingKey {
	case appsbus.KeyAppCreated:
		var m appsv1.AppCreated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("busapi: decode AppCreated: %w", err))
		}
		ap, err := appFrom(m.GetAppId(), m.GetAccountId(), m.GetSlug(), m.GetZone())
		if err != nil {
			return err
		}
		return a.apps.AppCreated(ctx, a.txs.Bind(tx), ap, timeOr(m.GetCreatedAt().AsTime(), m.GetCreatedAt() != nil, a.now()))
	case appsbus.KeyAppDeleted:
		var m appsv1.AppDeleted
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("busapi: decode AppDeleted: %w", err))
		}
		ap, err := appFrom(m.GetAppId(), m.GetAccountId(), m.GetSlug(), "")
		if err != nil {
			return err
		}
		return a.apps.AppDeleted(ctx, a.txs.Bind(tx), ap, timeOr(m.GetDeletedAt().AsTime(), m.GetDeletedAt() != nil, a.now()))
	}
	return bus.Permanent(fmt.Errorf("busapi: unexpected routing key %q on %s", d.RoutingKey, QueueApps))
}

func appFrom(id, account, slug, zone string) (logs.App, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return logs.App{}, bus.Permanent(fmt.Errorf("busapi: app id %q: %w", id, err))
	}
	return logs.App{ID: u.String(), AccountID: account, Slug: slug, Zone: zone}, nil
}

func timeOr(t time.Time, set bool, fallback time.Time) time.Time {
	if set {
		return t
	}
	return fallback
}
