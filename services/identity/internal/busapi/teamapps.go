package busapi

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/identity/internal/usecase"
)

// TeamAppsQueue is identity's own durable queue for the apps service's app events.
const TeamAppsQueue = "identity.team_apps"

// TeamAppsConsumer keeps identity's copy of which team owns which app: a team that owns
// apps cannot be deleted, and a token can be pinned only to its team's apps. An app's
// account_id is its owning team's id.
type TeamAppsConsumer struct {
	Repo func(tx bus.Tx) usecase.Repo
	Log  *slog.Logger
}

// Subscription is the durable subscription bus.Conn.Consume runs.
func (c TeamAppsConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: TeamAppsQueue, Keys: []string{appsbus.KeyAppCreated, appsbus.KeyAppDeleted}, Handle: c.Handle}
}

// Handle records or forgets the app. Both are idempotent, so a redelivery changes nothing; a
// malformed event will never become valid and is dead-lettered at once.
func (c TeamAppsConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	switch d.RoutingKey {
	case appsbus.KeyAppCreated:
		var ev appsv1.AppCreated
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(fmt.Errorf("decode app.created: %w", err))
		}
		if uuid.Validate(ev.GetAppId()) != nil || uuid.Validate(ev.GetAccountId()) != nil || !names.ValidSlug(ev.GetSlug()) {
			return bus.Permanent(fmt.Errorf("app.created %s: malformed", d.ID))
		}
		c.Log.DebugContext(ctx, "team app recorded", "app_id", ev.GetAppId(), "team_id", ev.GetAccountId())
		return usecase.ApplyAppCreated(ctx, c.Repo(tx), ev.GetAppId(), ev.GetAccountId(), ev.GetSlug())
	case appsbus.KeyAppDeleted:
		var ev appsv1.AppDeleted
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(fmt.Errorf("decode app.deleted: %w", err))
		}
		if uuid.Validate(ev.GetAppId()) != nil {
			return bus.Permanent(fmt.Errorf("app.deleted %s: malformed", d.ID))
		}
		c.Log.DebugContext(ctx, "team app forgotten", "app_id", ev.GetAppId())
		return usecase.ApplyAppDeleted(ctx, c.Repo(tx), ev.GetAppId())
	}
	return bus.Permanent(fmt.Errorf("unexpected routing key %q", d.RoutingKey))
}
