package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/databases/internal/usecase"
)

// QueueApps is this service's durable queue of the apps' deletions.
const QueueApps = "databases.apps"

// AppDeletions consumes apps.app.deleted: a deleted app's database goes with it.
func AppDeletions(txs Transactions, dbs *usecase.Databases) bus.Subscription {
	return bus.Subscription{
		Queue: QueueApps,
		Keys:  []string{appsbus.KeyAppDeleted},
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			var m appsv1.AppDeleted
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("busapi: decode AppDeleted: %w", err))
			}
			id, err := uuid.Parse(m.GetAppId())
			if err != nil {
				return bus.Permanent(fmt.Errorf("busapi: app id %q: %w", m.GetAppId(), err))
			}
			return dbs.AppDeleted(ctx, txs.Bind(tx), id.String())
		},
	}
}
