package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	"tori.dev/services/databases/internal/usecase"
)

// QueueDeploys is this service's durable queue of the deploys service's events.
const QueueDeploys = "databases.deploys"

// Deploys consumes deploys.deploy.{created,live}: the next deploy of an app whose database
// credentials were rotated retires the old password once it is live.
func Deploys(txs Transactions, dbs *usecase.Databases) bus.Subscription {
	return bus.Subscription{
		Queue: QueueDeploys,
		Keys:  []string{deploysbus.KeyDeployCreated, deploysbus.KeyDeployLive},
		// In order: a deploy's live event must find its created one (the rotation's retire
		// waits for the deploy made after it), and the relay publishes them in outbox order.
		Prefetch: 1,
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			switch d.RoutingKey {
			case deploysbus.KeyDeployCreated:
				var m deploysv1.DeployCreated
				if err := d.Decode(&m); err != nil {
					return bus.Permanent(fmt.Errorf("busapi: decode DeployCreated: %w", err))
				}
				appID, err1 := uuid.Parse(m.GetAppId())
				deployID, err2 := uuid.Parse(m.GetDeployId())
				if err1 != nil || err2 != nil || m.GetCreatedAt() == nil {
					return bus.Permanent(fmt.Errorf("busapi: a DeployCreated with bad ids or no time"))
				}
				return dbs.DeployCreated(ctx, txs.Bind(tx), appID.String(), deployID.String(), m.GetCreatedAt().AsTime(), m.GetRollbackOf() != "")
			case deploysbus.KeyDeployLive:
				var m deploysv1.DeployLive
				if err := d.Decode(&m); err != nil {
					return bus.Permanent(fmt.Errorf("busapi: decode DeployLive: %w", err))
				}
				deployID, err := uuid.Parse(m.GetDeployId())
				if err != nil {
					return bus.Permanent(fmt.Errorf("busapi: deploy id %q: %w", m.GetDeployId(), err))
				}
				return dbs.DeployLive(ctx, txs.Bind(tx), deployID.String())
			}
			return bus.Permanent(fmt.Errorf("busapi: unexpected routing key %q on %s", d.RoutingKey, QueueDeploys))
		},
	}
}
