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
	if err != nil {
		return Plan{}, err
	}
	if ok {
		return p.WithProcessDefaults(), nil
	}
	if s.plans == nil {
		return Plan{}, fmt.Errorf("%w: no copy and no billing to ask", deploy.ErrPlanUnavailable)
	}
	p, err = s.plans.AccountPlan(ctx, accountID)
	if err != nil {
		s.log.WarnContext(ctx, "plan unknown and billing did not answer", "account", accountID, "err", err.Error())
		return Plan{}, fmt.Errorf("%w: %w", deploy.ErrPlanUnavailable, err)
	}
	if err := s.store.InTx(aside(ctx), func(tx Tx) error { return tx.SavePlan(ctx, accountID, p) }); err != nil {
		return Plan{}, err
	}
	return p.WithProcessDefaults(), nil
}

// The nestling plan's process and cron limits (DESIGN38), which stand in for a limit billing
// has not announced yet: the smallest plan's, so nothing is allowed that no plan allows.
const (
	defaultProcessTypes           = 2
	defaultInstancesPerProcess    = 1
	defaultInstancesTotal         = 2
	defaultCronJobs               = 2
	defaultCronMinIntervalMinutes = 60
	defaultCronTimeoutSeconds     = 900
	defaultInstanceMemoryBytes    = 256 << 20
	defaultPreviews               = 1
	defaultPreviewMaxTTLHours     = 24
)

// WithProcessDefaults fills each process or cron limit that is zero (a plan copy from before
// billing announced them) with the nestling plan's. The one place that fallback lives:
// planFor applies it to every plan the use cases read.
func (p Plan) WithProcessDefaults() Plan {
	for _, f := range []struct {
		v   *int64
		def int64
	}{
		{&p.ProcessTypes, defaultProcessTypes},
		{&p.InstancesPerProcess, defaultInstancesPerProcess},
		{&p.InstancesTotal, defaultInstancesTotal},
		{&p.CronJobs, defaultCronJobs},
		{&p.CronMinIntervalMinutes, defaultCronMinIntervalMinutes},
		{&p.CronTimeoutSeconds, defaultCronTimeoutSeconds},
		{&p.InstanceMemoryBytes, defaultInstanceMemoryBytes},
		{&p.Previews, defaultPreviews},
		{&p.PreviewMaxTTLHours, defaultPreviewMaxTTLHours},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return p
}

// SavePlan records a plan_changed event (in the consumer's transaction).
func (s *Service) SavePlan(ctx context.Context, tx Tx, accountID string, p Plan) error {
	if accountID == "" {
		return errors.New("plan event without account")
	}
	return tx.SavePlan(ctx, accountID, p)
}
