package busapi

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"tori.dev/contract/billinghold"
	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/identity/internal/usecase"
)

// HoldsQueue is identity's own durable queue for billing's hold notices.
const HoldsQueue = "identity.holds"

// HoldMailConsumer mails an account's owner about its payment-failure hold when billing says
// a notice is due.
type HoldMailConsumer struct {
	Repo    func(tx bus.Tx) usecase.Repo
	Service *usecase.Service
	Log     *slog.Logger
}

// Subscription is the durable subscription bus.Conn.Consume runs.
func (c HoldMailConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: HoldsQueue, Keys: []string{billingbus.KeyHoldNotice}, Handle: c.Handle}
}

// Handle validates the notice and mails. A malformed notice will never become valid, so it is
// dead-lettered at once.
func (c HoldMailConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var ev billingv1.AccountHoldNotice
	if err := d.Decode(&ev); err != nil {
		return bus.Permanent(fmt.Errorf("decode hold_notice: %w", err))
	}
	notice := billinghold.Notice(ev.GetNotice())
	if !notice.Known() {
		return bus.Permanent(fmt.Errorf("hold_notice %s: unknown notice", d.ID))
	}
	if uuid.Validate(ev.GetAccountId()) != nil || ev.GetSince() == nil || ev.GetDeploysRefusedFrom() == nil || ev.GetServingStopsFrom() == nil {
		return bus.Permanent(fmt.Errorf("hold_notice %s: malformed", d.ID))
	}
	return c.Service.MailHoldNotice(ctx, c.Repo(tx), usecase.HoldNotice{
		AccountID: ev.GetAccountId(), Notice: notice, Since: ev.GetSince().AsTime(),
		DeploysRefusedFrom: ev.GetDeploysRefusedFrom().AsTime(), ServingStopsFrom: ev.GetServingStopsFrom().AsTime(),
	})
}
