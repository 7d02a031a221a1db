package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// CloseOverdue fails every deploy still open 20 minutes after insert (deadline_exceeded) and
// tells its zone to discard the revision.
// It also drops upload slots past their time (UploadHold), left by a process that died.
func (s *Service) CloseOverdue(ctx context.Context) (int64, error) {
	now := s.clock()
	if _, err := s.store.PruneUploads(ctx, now); err != nil {
		return 0, err
	}
	ids, err := s.store.Overdue(ctx, now.Add(-deploy.Deadline), 100)
	if err != nil {
		return 0, err
	}
	var closed int64
	for _, id := range ids {
		err := s.store.InTx(ctx, func(tx Tx) error {
			d, err := tx.Deploy(ctx, id)
			if err != nil {
				return err
			}
			prev := d.Status
			if !d.Expire(now) {
				return nil // it moved on meanwhile
			}
			app, err := tx.App(ctx, d.AppID)
			if err != nil {
				return err
			}
			if d.PreviewID != "" {
				closed++
				return s.closeOverduePreview(ctx, tx, app, d, now)
			}
			live, err := tx.Live(ctx, d.AppID)
			if err != nil {
				return err
			}
			if err := s.saveTransition(ctx, tx, d, prev, live != nil); err != nil {
				return err
			}
			closed++
			return s.discard(ctx, tx, app, d)
		})
		if err != nil && !errors.Is(err, deploy.ErrNotFound) {
			return closed, err
		}
	}
	return closed, nil
}

// closeOverduePreview records a preview revision past its deadline (no status event: it is
// no deploy of the app's), fails its preview when it was the current revision, and tells the
// zone to discard it.
func (s *Service) closeOverduePreview(ctx context.Context, tx Tx, app App, d *deploy.Deploy, now time.Time) error {
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	pv, err := tx.Preview(ctx, d.PreviewID)
	if err != nil && !errors.Is(err, preview.ErrNotFound) {
		return err
	}
	if pv != nil && pv.MarkFailed(now, d.ID, d.Error) {
		if err := tx.UpdatePreview(ctx, pv); err != nil {
			return err
		}
	}
	return s.discard(ctx, tx, app, d)
}

// SweepArtifacts deletes artifacts no deploy refers to, once older than grace: an upload
// commits its object a moment before its row, and the grace keeps that moment safe.
func (s *Service) SweepArtifacts(ctx context.Context, grace time.Duration) (int64, error) {
	cutoff := s.now().Add(-grace)
	var swept int64
	err := s.objects.Walk(ctx, "artifacts", func(key string, mod time.Time) error {
		if mod.After(cutoff) {
			return nil
		}
		used, err := s.store.ArtifactReferenced(ctx, key)
		if err != nil || used {
			return err
		}
		if err := s.objects.Delete(ctx, key); err != nil {
			return err
		}
		artifactsDeleted.WithLabelValues("unreferenced").Inc()
		swept++
		return nil
	})
	return swept, err
}

// MarkReclaimable follows each account's payment-failure hold to day 30: from then its
// artifacts are marked eligible for reclamation (nothing is deleted), until the hold ends.
func (s *Service) MarkReclaimable(ctx context.Context) (int64, error) {
	return s.store.MarkReclaimable(ctx, s.clock())
}
