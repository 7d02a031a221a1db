package usecase

import (
	"context"

	"tori.dev/services/deploys/internal/deploy"
)

// StaleRevision is a live service revision started under an older plan than its account's.
type StaleRevision struct {
	DeployID  string
	AppID     string
	AccountID string
}

// redeployBatch bounds one round of plan redeploys.
const redeployBatch = 100

// RedeployForPlans redeploys every running service whose live revision was started under an
// older plan than its account's copy: a new revision of the same artifact (or image) and
// environment snapshot, started with the new plan's resources (CPU ceiling, minScale, build
// time), which replaces the live one when it is ready. An app with a deploy under way is
// left for a later round: that deploy either carries the new plan already or is redeployed
// after it goes live. It runs every DEPLOYS_SWEEP_EVERY, so a plan change reaches running
// services within that time. A service is redeployed once for a plan version: when that
// revision fails (its image gone, a health check the new limits fail), the live one keeps
// running and the failed deploy says why; the next plan change or the customer's next deploy
// carries the plan. Retrying it every sweep would add a failed deploy to the app's history
// every DEPLOYS_SWEEP_EVERY, forever (seen at 10,000 apps: 95 such services a sweep).
func (s *Service) RedeployForPlans(ctx context.Context) (int64, error) {
	stale, err := s.store.StalePlanRevisions(ctx, redeployBatch)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range stale {
		ok, err := s.redeploy(ctx, r)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (s *Service) redeploy(ctx context.Context, r StaleRevision) (bool, error) {
	plan, err := s.planFor(ctx, r.AccountID)
	if err != nil {
		return false, err
	}
	done := false
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockAccount(ctx, r.AccountID); err != nil {
			return err
		}
		live, err := tx.Live(ctx, r.AppID)
		if err != nil || live == nil || live.ID != r.DeployID {
			return err // it was replaced meanwhile
		}
		open, err := tx.OpenDeploys(ctx, r.AppID)
		if err != nil || len(open) > 0 {
			return err
		}
		app, err := tx.App(ctx, r.AppID)
		if err != nil {
			return err
		}
		now := s.clock()
		d := &deploy.Deploy{
			ID: s.newID(), AppID: live.AppID, AccountID: live.AccountID, Kind: live.Kind, Status: deploy.Building,
			Image: live.Image, Release: live.Release, ArtifactKey: live.ArtifactKey, Env: live.Env, Framework: live.Framework,
			Processes: live.Processes, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.Insert(ctx, d); err != nil {
			return err
		}
		if err := s.publishCreated(ctx, tx, d); err != nil {
			return err
		}
		if err := tx.RecordRevisionPlan(ctx, d.ID, plan.Version); err != nil {
			return err
		}
		if err := tx.CopyDeclarations(ctx, live.ID, d.ID); err != nil {
			return err
		}
		done = true
		return s.startRevision(ctx, tx, app, plan, d, revisionOptions{releaseGiven: live.Release != nil})
	})
	return done, err
}
