package app

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/deploys/internal/deploy"
)

// List bounds (decisions.md).
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
)

// List returns the app's deploys newest first, at most limit, older than `before`.
func (s *Service) List(ctx context.Context, accountID, slug string, limit int, before string) ([]*deploy.Deploy, error) {
	if limit < 1 || limit > MaxListLimit {
		return nil, &deploy.ParamError{Name: "limit", Reason: fmt.Sprintf("must be 1 to %d", MaxListLimit)}
	}
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	if before != "" {
		b, err := s.store.Deploy(ctx, before)
		if err != nil || b.AppID != app.ID {
			return nil, &deploy.ParamError{Name: "before", Reason: "must be the id of a deploy of this app"}
		}
	}
	out, err := s.store.List(ctx, app.ID, limit, before)
	if out == nil && err == nil {
		out = []*deploy.Deploy{}
	}
	return out, err
}

// Get returns one deploy of the caller's app.
func (s *Service) Get(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	d, err := s.store.Deploy(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.AppID != app.ID {
		return nil, deploy.ErrNotFound
	}
	return d, nil
}

// Cancel ends a building or releasing deploy. The zone lets a running release Job finish,
// collects it and never switches the revision live.
func (s *Service) Cancel(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	var out *deploy.Deploy
	err = s.store.InTx(ctx, func(tx Tx) error {
		d, err := tx.Deploy(ctx, id)
		if err != nil {
			return err
		}
		if d.AppID != app.ID {
			return deploy.ErrNotFound
		}
		prev := d.Status
		if err := d.CancelByCustomer(s.clock()); err != nil {
			return err
		}
		live, err := tx.Live(ctx, app.ID)
		if err != nil {
			return err
		}
		if err := s.saveTransition(ctx, tx, d, prev, live != nil); err != nil {
			return err
		}
		out = d
		return s.discard(ctx, tx, app, d)
	})
	return out, err
}

// Rollback starts a new deploy with the same artifact, image, release command and
// environment snapshot as a deploy that was once live. The release command runs again
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
		Env: target.Env, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.insert(ctx, app, plan, d, target.Release != nil); err != nil {
		return nil, err
	}
	return d, nil
}

// isRefusal tells a transition the state machine refused (a late or repeated report) from a
// failure worth retrying.
func isRefusal(err error) bool {
	return errors.Is(err, deploy.ErrInvalidTransition) || errors.Is(err, deploy.ErrTerminal) ||
		errors.Is(err, deploy.ErrNotCancellable)
}

// AppKind tells the HTTP layer whether a multipart body is a static site or a source
// tarball; an unknown or foreign app is not found.
func (s *Service) AppKind(ctx context.Context, accountID, slug string) (string, error) {
	app, err := s.appFor(ctx, accountID, slug)
	return app.Kind, err
}
