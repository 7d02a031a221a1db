package usecase

import (
	"context"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/deploys/internal/deploy"
)

// Cancel ends a building or releasing deploy. The zone lets a running release Job finish,
// collects it and never switches the revision live.
func (s *Service) Cancel(ctx context.Context, accountID, slug, id string) (*deploy.Deploy, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	accessgate.SetTarget(ctx, "deploy/"+id)
	var out *deploy.Deploy
	err = s.store.InTx(ctx, func(tx Tx) error {
		d, err := tx.Deploy(ctx, id)
		if err != nil {
			return err
		}
		if d.AppID != app.ID || d.PreviewID != "" {
			return deploy.ErrNotFound // a preview's revision goes with its preview (DELETE)
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
