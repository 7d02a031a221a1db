package app

import (
	"context"
	"errors"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/account"
)

// planTimeout bounds the question to billing on the read path: an account page should not
// wait the bus's full request timeout for limits it can show from the fallback.
const planTimeout = 2 * time.Second

// AccountView is what GET and PATCH /api/account show.
type AccountView struct {
	Account account.Account
	User    account.User
	Plan    account.Plan
}

// GetAccount loads the caller's account with its plan.
func (s *Service) GetAccount(ctx context.Context, c callerid.Caller) (AccountView, error) {
	a, u, err := s.store.Account(ctx, c.AccountID)
	if err != nil {
		return AccountView{}, err
	}
	return AccountView{Account: a, User: u, Plan: s.planFor(ctx, a.ID)}, nil
}

// UpdateRegion sets the default region when region names a known one; anything else
// leaves the account as it is, as the contract's PATCH rules say.
func (s *Service) UpdateRegion(ctx context.Context, c callerid.Caller, region string) (AccountView, error) {
	r, ok := account.ParseRegion(region)
	if !ok {
		return s.GetAccount(ctx, c)
	}
	now := s.now()
	var view AccountView
	err := s.store.InTx(ctx, func(tx Repo) error {
		a, u, err := tx.LockAccount(ctx, c.AccountID)
		if err != nil {
			return err
		}
		view.Account, view.User = a, u
		if !view.Account.SetRegion(r, now) {
			return nil
		}
		if err := tx.SaveAccount(ctx, view.Account); err != nil {
			return err
		}
		return tx.Publish(ctx, KeyAccountUpdated, accountUpdated(view.Account))
	})
	if err != nil {
		return AccountView{}, err
	}
	view.Plan = s.planFor(ctx, view.Account.ID)
	return view, nil
}

// planFor is identity's copy of the plan, or billing's answer while the copy is still in
// flight, or nestling's limits when billing does not answer. Every account starts on
// nestling, so the fallback is right unless an upgrade happened in the same moment.
func (s *Service) planFor(ctx context.Context, accountID string) account.Plan {
	p, err := s.store.Plan(ctx, accountID)
	if err == nil {
		return p
	}
	if !errors.Is(err, account.ErrNotFound) {
		s.log.ErrorContext(ctx, "read plan copy", "account_id", accountID, "err", err.Error())
		return account.FallbackPlan()
	}
	qctx, cancel := context.WithTimeout(ctx, planTimeout)
	defer cancel()
	p, err = s.plans.AccountPlan(qctx, accountID)
	if err != nil {
		s.log.WarnContext(ctx, "billing did not answer for the plan; showing nestling limits",
			"account_id", accountID, "err", err.Error())
		return account.FallbackPlan()
	}
	if _, err := s.store.SavePlan(ctx, accountID, p); err != nil {
		s.log.WarnContext(ctx, "keep billing's plan answer", "account_id", accountID, "err", err.Error())
	}
	return p
}

// ApplyPlanChange keeps billing's plan for the account unless a newer one is kept already.
// It runs in the bus consumer's transaction, so the copy and the processed-message record
// commit together.
func ApplyPlanChange(ctx context.Context, tx Repo, accountID string, p account.Plan) (saved bool, err error) {
	return tx.SavePlan(ctx, accountID, p)
}
