package usecase

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/billinghold"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/mirror"
)

// settleHold brings the account's hold in line with its invoices and, when it starts, moves
// or ends, announces it as billingbus.KeyHoldChanged in tx. Stages follow from the dates, so
// nothing is announced as days pass.
func (s *Service) settleHold(ctx context.Context, tx Tx, accountID uuid.UUID) error {
	since, err := tx.HoldSince(ctx, accountID)
	if err != nil {
		return err
	}
	current, err := tx.AccountHold(ctx, accountID)
	if err != nil {
		return err
	}
	if current.Since.Equal(since) {
		return nil
	}
	next := mirror.HoldRecord{Since: since, Version: current.Version + 1}
	now := s.now()
	if err := tx.SetAccountHold(ctx, accountID, next, now); err != nil {
		return err
	}
	ev := &billingv1.AccountHoldChanged{AccountId: accountID.String(), Version: next.Version, ChangedAt: timestamppb.New(now)}
	if !since.IsZero() {
		h := billinghold.From(since)
		ev.Active = true
		ev.Since = timestamppb.New(h.Since)
		ev.DeploysRefusedFrom = timestamppb.New(h.DeploysRefusedFrom)
		ev.ServingStopsFrom = timestamppb.New(h.ServingStopsFrom)
		ev.ReclaimableFrom = timestamppb.New(h.ReclaimableFrom)
	}
	if err := tx.Publish(ctx, billingbus.KeyHoldChanged, ev); err != nil {
		return fmt.Errorf("billing: publish hold change: %w", err)
	}
	return nil
}
