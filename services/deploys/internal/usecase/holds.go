package usecase

import (
	"context"
	"errors"

	"tori.dev/services/deploys/internal/deploy"
)

// SaveHold records a billing.account.hold_changed event (in the consumer's transaction).
func (s *Service) SaveHold(ctx context.Context, tx Tx, accountID string, h deploy.Hold) error {
	if accountID == "" {
		return errors.New("hold event without account")
	}
	return tx.SaveHold(ctx, accountID, h)
}

// holdCheck refuses a new deploy while the account's payment-failure hold is at day 7 or
// later, with the hold's dates. Rollbacks do not ask: they still work under a hold. No copy
// means no hold: billing announces every hold it starts.
func (s *Service) holdCheck(ctx context.Context, accountID string) error {
	h, found, err := s.store.Hold(ctx, accountID)
	if err != nil || !found {
		return err
	}
	now := s.clock()
	if !h.RefusesDeploys(now) {
		return nil
	}
	return &deploy.HoldError{Hold: h, Stage: h.StageAt(now)}
}
