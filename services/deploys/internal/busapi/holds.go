package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// QueueHolds receives billing's payment-failure holds.
const QueueHolds = "deploys.holds"

func holdsHandler(svc *usecase.Service, bind BindTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev billingv1.AccountHoldChanged
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if _, err := uuid.Parse(ev.GetAccountId()); err != nil {
			return bus.Permanent(fmt.Errorf("hold_changed with account id %q: not a UUID", ev.GetAccountId()))
		}
		h := deploy.Hold{Active: ev.GetActive(), Version: ev.GetVersion()}
		if h.Active {
			h.Since = ev.GetSince().AsTime()
			h.DeploysRefusedFrom = ev.GetDeploysRefusedFrom().AsTime()
			h.ServingStopsFrom = ev.GetServingStopsFrom().AsTime()
			h.ReclaimableFrom = ev.GetReclaimableFrom().AsTime()
		}
		return svc.SaveHold(ctx, bind(tx), ev.GetAccountId(), h)
	}
}
