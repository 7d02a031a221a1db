package usecase

import (
	"context"
	"fmt"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/deploys/internal/deploy"
)

// Rollback starts a new deploy with the same artifact, image, release command, environment
// snapshot and framework as a deploy that was once live. The release command runs again
// before traffic moves.
func (s *Service) Rollback(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error) {
	target, err := s.Get(ctx, accountID, slug, id)
	if err != nil {
		return nil, err
	}
	if !target.Rollbackable() {
		return nil, fmt.Errorf("%w: deploy %s never went live", deploy.ErrNotRollbackable, target.ID)
	}
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	d := &deploy.Deploy{
		ID: s.newID(), AppID: app.ID, AccountID: accountID, Kind: target.Kind, Status: deploy.Building,
		Image: target.Image, Release: target.Release, RollbackOf: target.ID, ArtifactKey: target.ArtifactKey,
		Env: target.Env, Framework: target.Framework, Processes: target.Processes, CreatedAt: now, UpdatedAt: now,
	}
	audit(ctx, d.ID, d.Kind)
	accessgate.Annotate(ctx, "rollbackOf", target.ID)
	// The target's declarations come with it, so its formation is known even if the zone's
	// READY report names none (the zone reads the same artifact and reports them again).
	opts := revisionOptions{releaseGiven: target.Release != nil, declarationsOf: target.ID}
	if err := s.insert(ctx, app, plan, d, opts); err != nil {
		return nil, err
	}
	return d, nil
}
