package events

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/store"
)

// CleanupSubscription collects <service>.app.cleaned confirmations on the durable queue
// apps.cleanup; the last one awaited reclaims the tombstone and frees its slug.
func CleanupSubscription(log *slog.Logger) bus.Subscription {
	return bus.Subscription{
		Queue: QueueCleanup,
		Keys:  []string{KeyCleanupConfirmed},
		Handle: func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
			return HandleCleanupConfirmed(ctx, tx, d, log)
		},
	}
}

// HandleCleanupConfirmed applies one confirmation in tx.
func HandleCleanupConfirmed(ctx context.Context, tx pgx.Tx, d bus.Delivery, log *slog.Logger) error {
	var m appsv1.AppCleanupConfirmed
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
	}
	service := m.GetService()
	if service == "" {
		// The routing key names the service too: <service>.app.cleaned.
		service, _, _ = strings.Cut(d.RoutingKey, ".")
	}
	if service == "" {
		return bus.Permanent(fmt.Errorf("%s without a service", d.RoutingKey))
	}
	if _, err := uuid.Parse(m.GetAppId()); err != nil {
		// Not an id this service ever issued: there is no tombstone it could concern.
		log.WarnContext(ctx, "cleanup confirmation for a malformed app id ignored", "routing_key", d.RoutingKey)
		return nil
	}
	reclaimed, err := store.ConfirmCleanupTx(ctx, tx, m.GetAppId(), service, time.Now().UTC())
	if err != nil {
		return err
	}
	if reclaimed {
		log.InfoContext(ctx, "deleted app reclaimed", "app_id", m.GetAppId(), "last_service", service)
	}
	return nil
}
