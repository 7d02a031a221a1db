package usecase

import (
	"context"
	"errors"
	"time"
)

// OnAppCreated records the app (in the consumer's transaction).
func (s *Service) OnAppCreated(ctx context.Context, tx Tx, a App, createdAt time.Time) error {
	return tx.SaveApp(ctx, a, createdAt)
}

// OnAppDeleted hides the app from every route at once, cancels its open deploys and ends its
// previews; the
// cleanup job then removes artifacts and rows and confirms with deploys.app.cleaned.
func (s *Service) OnAppDeleted(ctx context.Context, tx Tx, appID string) error {
	now := s.clock()
	if err := tx.MarkAppDeleted(ctx, appID, now); err != nil {
		return err
	}
	app, err := tx.App(ctx, appID)
	if err != nil {
		return err
	}
	open, err := tx.OpenDeploys(ctx, appID)
	if err != nil {
		return err
	}
	for _, d := range open {
		prev := d.Status
		if err := d.Cancel(now); err != nil {
			return err
		}
		save := func() error { return s.saveTransition(ctx, tx, d, prev, false) }
		if d.PreviewID != "" {
			save = func() error { return tx.Update(ctx, d) } // no deploy of the app's: no event
		}
		if err := save(); err != nil {
			return err
		}
		if err := s.discard(ctx, tx, app, d); err != nil {
			return err
		}
	}
	// The zone removes the app's previews itself on apps.app.deleted.
	return tx.MarkPreviewsDeleted(ctx, appID, now)
}

// CleanDeletedApps removes the artifacts and rows of deleted apps and confirms each. It is
// safe to run again after a crash: deleting a missing object is no error.
func (s *Service) CleanDeletedApps(ctx context.Context) (int64, error) {
	ids, err := s.store.AppsToClean(ctx, 50)
	if err != nil {
		return 0, err
	}
	var done int64
	for _, appID := range ids {
		keys, err := s.store.ArtifactsOf(ctx, appID)
		if err != nil {
			return done, err
		}
		var errs []error
		for _, k := range keys {
			err := s.objects.Delete(ctx, k)
			if err == nil {
				artifactsDeleted.WithLabelValues("app_deleted").Inc()
			}
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return done, err
		}
		err = s.store.InTx(ctx, func(tx Tx) error {
			now := s.clock()
			if err := tx.PurgeApp(ctx, appID, now); err != nil {
				return err
			}
			return s.publishCleaned(ctx, tx, appID, now)
		})
		if err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
