package service

import (
	"context"
	"errors"
)

// PlanSource asks billing for an account's plan when no copy has arrived yet.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (Plan, error)
}

// fallbackPlan is nestling's limits, used only when neither a copy nor billing's answer is
// available: the strictest plan never lets a deploy past a limit it should not pass.
var fallbackPlan = Plan{Name: "nestling", ConcurrentDeploys: 1, UploadBytes: 100 << 20, BuildMinutes: 10, MinScale: 0, CPU: 0.25}

// planFor returns the account's plan: the copy from billing's events, else billing's answer
// (recorded so the next request needs no round trip), else the fallback.
func (s *Service) planFor(ctx context.Context, accountID string) (Plan, error) {
	p, ok, err := s.store.Plan(ctx, accountID)
	if err != nil || ok {
		return p, err
	}
	if s.plans != nil {
		p, err := s.plans.AccountPlan(ctx, accountID)
		if err == nil {
			if err := s.store.InTx(ctx, func(tx Tx) error { return tx.SavePlan(ctx, accountID, p) }); err != nil {
				return Plan{}, err
			}
			return p, nil
		}
		s.log.WarnContext(ctx, "plan unknown and billing did not answer; applying nestling limits", "account", accountID, "err", err.Error())
	}
	return fallbackPlan, nil
}

// SavePlan records a plan_changed event (in the consumer's transaction).
func (s *Service) SavePlan(ctx context.Context, tx Tx, accountID string, p Plan) error {
	if accountID == "" {
		return errors.New("plan event without account")
	}
	return tx.SavePlan(ctx, accountID, p)
}
