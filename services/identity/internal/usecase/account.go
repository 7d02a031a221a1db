package usecase

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
)

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
	p, err := s.planFor(ctx, a.ID)
	if err != nil {
		return AccountView{}, err
	}
	return AccountView{Account: a, User: u, Plan: p}, nil
}

// UpdateRegion sets the default region when region names a known one; anything else
// leaves the account as it is, as the contract's PATCH rules say.
func (s *Service) UpdateRegion(ctx context.Context, c callerid.Caller, region string) (AccountView, error) {
	r, ok := account.ParseRegion(region)
	if !ok {
		return s.GetAccount(ctx, c)
	}
	// The plan first: a request billing cannot complete fails before it changes anything.
	p, err := s.planFor(ctx, c.AccountID)
	if err != nil {
		return AccountView{}, err
	}
	now := s.now()
	view := AccountView{Plan: p}
	err = s.store.InTx(ctx, func(tx Repo) error {
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
		return tx.Publish(ctx, identitybus.KeyAccountUpdated, accountUpdated(view.Account))
	})
	if err != nil {
		return AccountView{}, err
	}
	return view, nil
}

// planFor is identity's copy of the plan or, before billing's first plan_changed has
// arrived, billing's answer, kept as the copy (docs/conventions.md, "An account's plan").
// When billing cannot answer nothing guesses: the error wraps ErrPlanUnavailable.
// A copy kept before plans had process limits is completed the same way, once; while billing
// does not answer, the copy is shown as it is.
func (s *Service) planFor(ctx context.Context, accountID string) (account.Plan, error) {
	kept, err := s.store.Plan(ctx, accountID)
	if err == nil && !kept.PredatesProcessLimits() {
		return kept, nil
	}
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		return account.Plan{}, fmt.Errorf("read plan copy: %w", err)
	}
	p, err := s.plans.AccountPlan(ctx, accountID)
	if err != nil && kept.Name != "" {
		s.log.WarnContext(ctx, "plan copy lacks process limits and billing did not answer", "account_id", accountID, "err", err.Error())
		return kept, nil
	}
	if err != nil {
		s.log.WarnContext(ctx, "no plan copy and billing did not answer", "account_id", accountID, "err", err.Error())
		return account.Plan{}, err
	}
	if kept.Name != "" && kept.Version > p.Version {
		return kept, nil // a newer event arrived while we asked; only its process limits are missing
	}
	if _, err := s.store.SavePlan(ctx, accountID, p); err != nil {
		s.log.WarnContext(ctx, "keep billing's plan answer", "account_id", accountID, "err", err.Error())
	}
	return p, nil
}

// ApplyPlanChange keeps billing's plan for the account unless a newer one is kept already.
// It runs in the bus consumer's transaction, so the copy and the processed-message record
// commit together. A kept plan changes what GET /api/account shows, so it is announced as
// identity.account.updated (with the account's settings as they are): a gateway's copy of
// the account is dropped only once identity itself has the new plan, never before.
func ApplyPlanChange(ctx context.Context, tx Repo, accountID string, p account.Plan) (saved bool, err error) {
	saved, err = tx.SavePlan(ctx, accountID, p)
	if err != nil || !saved {
		return saved, err
	}
	a, _, err := tx.Account(ctx, accountID)
	if errors.Is(err, account.ErrNotFound) {
		return true, nil // billing heard of the account first; its creation is announced anyway
	}
	if err != nil {
		return false, err
	}
	return true, tx.Publish(ctx, identitybus.KeyAccountUpdated, accountUpdated(a))
}
