package usecase

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/billinghold"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/hold"
	"tori.dev/services/billing/internal/mirror"
)

// SendHoldNotices announces the notices every active hold calls for now
// (billingbus.KeyHoldNotice; identity writes the mails), each once per hold, and returns how
// many went out. It runs on a timer: notices follow the clock, not events.
func (s *Service) SendHoldNotices(ctx context.Context) (int64, error) {
	holds, err := s.store.ActiveHolds(ctx)
	if err != nil {
		return 0, err
	}
	var sent int64
	for _, a := range holds {
		h := billinghold.From(a.Since)
		for _, n := range hold.Due(h, s.now()) {
			ok, err := s.sendNotice(ctx, a, h, n)
			if err != nil {
				return sent, err
			}
			if ok {
				sent++
			}
		}
	}
	return sent, nil
}

// sendNotice records and announces one notice in one transaction, unless it went out already
// or the hold has moved or ended since it was listed.
func (s *Service) sendNotice(ctx context.Context, a mirror.ActiveHold, h billinghold.Hold, n billinghold.Notice) (bool, error) {
	var sent bool
	err := s.store.InTx(ctx, func(tx Tx) error {
		current, err := tx.AccountHold(ctx, a.AccountID)
		if err != nil || !current.Since.Equal(a.Since) {
			return err
		}
		first, err := tx.RecordNotice(ctx, a.AccountID, a.Since, string(n), s.now())
		if err != nil || !first {
			return err
		}
		ev := &billingv1.AccountHoldNotice{
			AccountId: a.AccountID.String(), Notice: string(n), Since: timestamppb.New(h.Since),
			DeploysRefusedFrom: timestamppb.New(h.DeploysRefusedFrom), ServingStopsFrom: timestamppb.New(h.ServingStopsFrom),
		}
		if err := tx.Publish(ctx, billingbus.KeyHoldNotice, ev); err != nil {
			return fmt.Errorf("billing: publish hold notice: %w", err)
		}
		sent = true
		return nil
	})
	return sent, err
}
