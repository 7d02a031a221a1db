package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// RegisterAccount records a new account on the default plan and announces that plan, inside
// tx (the consumer's transaction, which also records the message as processed). Registering
// an account billing knows already changes nothing and announces nothing, so a redelivered or
// duplicated account.created is harmless.
func (s *Service) RegisterAccount(ctx context.Context, tx pgx.Tx, id uuid.UUID, email string) error {
	a := accounts.New(id, email, s.now())
	inserted, err := s.store.InsertAccount(ctx, tx, a)
	if err != nil || !inserted {
		return err
	}
	return s.announce(ctx, tx, a)
}

// SetPlan moves the account ref names to plan and announces the change, in one transaction.
// changed is false when the account is on that plan already; then nothing is written.
func (s *Service) SetPlan(ctx context.Context, ref accounts.Ref, plan string) (a accounts.Account, changed bool, err error) {
	p, err := catalog.Lookup(plan)
	if err != nil {
		return accounts.Account{}, false, err
	}
	err = s.store.InTx(ctx, func(tx pgx.Tx) error {
		current, err := s.store.LockAccount(ctx, tx, ref)
		if err != nil {
			return err
		}
		a, changed = current.ChangePlan(p.Name, s.now())
		if !changed {
			return nil
		}
		if err := s.store.UpdateAccount(ctx, tx, a); err != nil {
			return err
		}
		return s.announce(ctx, tx, a)
	})
	if err != nil {
		return accounts.Account{}, false, err
	}
	return a, changed, nil
}

// AccountPlan is the account's plan now. An account billing has not recorded yet is on the
// default plan at version 0: every account starts there, and its account.created may still
// be on its way.
func (s *Service) AccountPlan(ctx context.Context, id uuid.UUID) (accounts.Account, error) {
	a, err := s.store.Account(ctx, id)
	if errors.Is(err, accounts.ErrNotFound) {
		return accounts.Unrecorded(id), nil
	}
	return a, err
}

func (s *Service) announce(ctx context.Context, tx pgx.Tx, a accounts.Account) error {
	ev, err := PlanChangedEvent(a)
	if err != nil {
		return err
	}
	if err := s.publish(ctx, tx, RoutingKeyPlanChanged, ev); err != nil {
		return fmt.Errorf("billing: publish plan change: %w", err)
	}
	return nil
}
