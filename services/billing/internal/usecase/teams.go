package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/mirror"
)

// Teams pay for what they own. A person's personal team has the person's account id, so its
// plan is the one account.created recorded; a team made later gets a plan of its own here.

// RegisterTeam puts a new team on the default plan and announces it, inside tx (the
// consumer's transaction), exactly as RegisterAccount does for an account. A personal team
// needs nothing (its account has its plan already), and a team billing knows already (a
// redelivery, or one deleted before its creation arrived) changes nothing.
func (s *Service) RegisterTeam(ctx context.Context, tx Tx, teamID, creatorID uuid.UUID, personal bool) error {
	if personal {
		return nil
	}
	// The customer a team's checkout creates is mailed at its creator's address.
	creator, err := s.store.Account(ctx, creatorID)
	if err != nil && !errors.Is(err, accounts.ErrNotFound) {
		return err
	}
	a := accounts.NewTeam(teamID, creator.Email, s.now())
	inserted, err := tx.InsertAccount(ctx, a)
	if err != nil || !inserted {
		return err
	}
	return announce(ctx, tx, a)
}

// TeamDeleted ends the deleted team's subscriptions at the provider and marks its plan gone,
// inside tx. Every step may be repeated: a subscription ended already is skipped (or is not
// found at the provider), and the mark keeps the first deletion's time.
func (s *Service) TeamDeleted(ctx context.Context, tx Tx, teamID uuid.UUID) error {
	subs, err := tx.Subscriptions(ctx, teamID)
	if err != nil {
		return err
	}
	now := s.now()
	for _, sub := range subs {
		if sub.Ended() {
			continue
		}
		if s.pay == nil {
			// Paid plans were turned off with a subscription running: nothing here can end it.
			return fmt.Errorf("billing: team %s deleted with subscription %s, and no payment provider to end it", teamID, sub.ID)
		}
		if err := s.pay.Provider.CancelSubscription(ctx, sub.ID); err != nil && !errors.Is(err, ErrProviderNotFound) {
			return err
		}
		// The provider's own event will say so too; the mirror need not wait for it.
		sub.Status, sub.ObservedAt = mirror.StatusCanceled, now
		if _, err := tx.PutSubscription(ctx, sub); err != nil {
			return err
		}
	}
	return tx.MarkTeamDeleted(ctx, teamID, now)
}
