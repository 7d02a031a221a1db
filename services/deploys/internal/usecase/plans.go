package usecase

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/deploys/internal/deploy"
)

// PlanSource asks billing for an account's plan when no copy has arrived yet.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (Plan, error)
}

// planFor returns the account's plan: the copy from billing's events, else billing's answer
// (recorded so the next request needs no round trip). When billing cannot answer, the limits
// are unknown and the work that needed them fails with deploy.ErrPlanUnavailable: guessing
// could let a deploy past a limit or refuse one its plan allows (docs/conventions.md, "An
// account's plan").
func (s *Service) planFor(ctx context.Context, accountID string) (Plan, error) {
	p, ok, err := s.store.Plan(ctx, accountID)
	if err != nil || ok {
		return p, err
	}
	if s.plans == nil {
		return Plan{}, fmt.Errorf("%w: no copy and no billing to ask", deploy.ErrPlanUnavailable)
	}
	p, err = s.plans.AccountPlan(ctx, accountID)
	if err != nil {
		s.log.WarnContext(ctx, "plan unknown and billing did not answer", "account", accountID, "err", err.Error())
		return Plan{}, fmt.Errorf("%w: %w", deploy.ErrPlanUnavailable, err)
	}
	if err := s.store.InTx(ctx, func(tx Tx) error { return tx.SavePlan(ctx, accountID, p) }); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// SavePlan records a plan_changed event (in the consumer's transaction).
func (s *Service) SavePlan(ctx context.Context, tx Tx, accountID string, p Plan) error {
	if accountID == "" {
		return errors.New("plan event without account")
	}
	return tx.SavePlan(ctx, accountID, p)
}
