package busapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/usecase"
)

// Cleanup collects <service>.app.cleaned confirmations of the CleanupFrom services on the
// durable queue apps.cleanup; the last one awaited reclaims the tombstone and frees its slug.
func (c Consumers) Cleanup() bus.Subscription {
	keys := make([]string, 0, len(c.CleanupFrom))
	for _, s := range c.CleanupFrom {
		keys = append(keys, cleanupKey(s))
	}
	return bus.Subscription{Queue: QueueCleanup, Keys: keys, Handle: c.HandleCleanupConfirmed}
}

// HandleCleanupConfirmed applies one confirmation in tx.
func (c Consumers) HandleCleanupConfirmed(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var m appsv1.AppCleanupConfirmed
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
	}
	// The routing key names the service (<service>.app.cleaned), and only that service may
	// publish it: a confirmation speaks for its publisher, whatever its body says.
	service, _, _ := strings.Cut(d.RoutingKey, ".")
	if service == "" || (m.GetService() != "" && m.GetService() != service) {
		return bus.Permanent(fmt.Errorf("%s confirms for %q", d.RoutingKey, m.GetService()))
	}
	if _, err := uuid.Parse(m.GetAppId()); err != nil {
		// Not an id this service ever issued: there is no tombstone it could concern.
		c.Log.WarnContext(ctx, "cleanup confirmation for a malformed app id ignored", "routing_key", d.RoutingKey)
		return nil
	}
	reclaimed, err := usecase.ConfirmCleanup(ctx, c.Tx(tx), m.GetAppId(), service, time.Now().UTC())
	if err != nil {
		return err
	}
	if reclaimed {
		c.Log.InfoContext(ctx, "deleted app reclaimed", "app_id", m.GetAppId(), "last_service", service)
	}
	return nil
}
