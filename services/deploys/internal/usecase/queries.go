package usecase

import (
	"context"
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
		if err != nil || b.AppID != app.ID || b.PreviewID != "" {
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
	// A preview's revision is none of the app's deploys: not shown, cancelled or rolled back to.
	if d.AppID != app.ID || d.PreviewID != "" {
		return nil, deploy.ErrNotFound
	}
	return d, nil
}

// AppKind tells the HTTP layer whether a multipart body is a static site or a source
// tarball; an unknown or foreign app is not found.
func (s *Service) AppKind(ctx context.Context, accountID, slug string) (string, error) {
	app, err := s.appFor(ctx, accountID, slug)
	return app.Kind, err
}
