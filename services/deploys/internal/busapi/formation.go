package busapi

import (
	"context"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// QueueFormations receives the zones' reports of how many instances of each process type run.
const QueueFormations = "deploys.formations"

func formationHandler(svc *usecase.Service, bind BindTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev zonev1.FormationStatus
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		// The zone that published it, which the broker vouches for, not the one it names.
		ev.Zone = ""
		if zone, ok := bus.ZoneOf(d.Publisher); ok {
			ev.Zone = zone
		}
		return svc.OnFormationStatus(ctx, bind(tx), &ev)
	}
}
