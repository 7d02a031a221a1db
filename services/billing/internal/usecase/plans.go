package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// RegisterAccount records a new account on the default plan and announces that plan, inside
// tx (the consumer's transaction, which also records the message as processed). Registering
// an account billing knows already changes nothing and announces nothing, so a redelivered or
// duplicated account.created is harmless.
func (s *Service) RegisterAccount(ctx context.Context, tx Tx, id uuid.UUID, email string) error {
	a := accounts.New(id, email, s.now())
	inserted, err := tx.InsertAccount(ctx, a)
	if err != nil || !inserted {
		return err
	}
	return announce(ctx, tx, a)
}

// SetPlan moves the account ref names to plan and announces the change, in one transaction.
// changed is false when the account is on that plan already; then nothing is written.
func (s *Service) SetPlan(ctx context.Context, ref accounts.Ref, plan string) (a accounts.Account, changed bool, err error) {
	p, err := catalog.Lookup(plan)
	if err != nil {
		return accounts.Account{}, false, err
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		current, err := tx.LockAccount(ctx, ref)
		if err != nil {
			return err
		}
		a, changed = current.ChangePlan(p.Name, s.now())
		if !changed {
			return nil
		}
		if err := tx.UpdateAccount(ctx, a); err != nil {
			return err
		}
		return announce(ctx, tx, a)
	})
	if err != nil {
		return accounts.Account{}, false, err
	}
	return a, changed, nil
}

// recordedPollEvery is how often SetPlanWhenRecorded looks again for the account.
const recordedPollEvery = 100 * time.Millisecond

// SetPlanWhenRecorded is SetPlan for an operator: an account billing has not recorded yet is
// waited for until ctx ends, since a test or script that has just signed up an account may
// ask before identity's account.created has reached billing.
func (s *Service) SetPlanWhenRecorded(ctx context.Context, ref accounts.Ref, plan string) (accounts.Account, bool, error) {
	missing := false
	for {
		a, changed, err := s.SetPlan(ctx, ref, plan)
		switch {
		case errors.Is(err, accounts.ErrNotFound):
			missing = true
		case missing && ctx.Err() != nil:
			// The deadline passed during a retry: what went wrong is still the missing account.
		default:
			return a, changed, err
		}
		select {
		case <-ctx.Done():
			return accounts.Account{}, false, fmt.Errorf("%w: no account %s reached billing in time", accounts.ErrNotFound, ref)
		case <-time.After(recordedPollEvery):
		}
	}
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

// announce publishes a's plan in tx, so the event commits with the change it reports.
func announce(ctx context.Context, tx Publisher, a accounts.Account) error {
	ev, err := planChanged(a)
	if err != nil {
		return err
	}
	if err := tx.Publish(ctx, billingbus.KeyPlanChanged, ev); err != nil {
		return fmt.Errorf("billing: publish plan change: %w", err)
	}
	return nil
}
