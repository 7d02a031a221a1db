package usecase

import (
	"context"
	"errors"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// onPreviewProgress applies a zone's report on a preview's revision. Nothing of it reaches
// the app's deploys: no status event is published (the apps service would take it for the
// app's), no formation changes, and the revision never goes live. READY tells the zone to
// serve it at the preview's host and marks the preview ready; FAILED marks it failed.
func (s *Service) onPreviewProgress(ctx context.Context, tx Tx, app App, d *deploy.Deploy, p *zonev1.DeployProgress) error {
	pv, err := tx.Preview(ctx, d.PreviewID)
	if errors.Is(err, preview.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := s.clock()
	switch p.GetStep() {
	case zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED, zonev1.DeployStep_DEPLOY_STEP_RELEASE_SUCCEEDED:
		if d.Status != deploy.Building {
			return nil
		}
		if err := d.StartRelease(now); err != nil {
			return err
		}
		return tx.Update(ctx, d)
	case zonev1.DeployStep_DEPLOY_STEP_READY:
		return s.onPreviewReady(ctx, tx, app, d, pv, p.GetProcesses())
	case zonev1.DeployStep_DEPLOY_STEP_FAILED:
		code := p.GetError()
		if code == "" {
			code = "deploy_failed"
		}
		if err := d.Fail(now, code); err != nil {
			return err
		}
		if err := tx.Update(ctx, d); err != nil {
			return err
		}
		if pv.MarkFailed(now, d.ID, code) {
			return tx.UpdatePreview(ctx, pv)
		}
	}
	return nil // build started, activated, discarded: nothing changes
}

// onPreviewReady serves a prepared preview revision, unless it is no longer the preview's
// (replaced, or the preview is gone), in which case the zone discards it.
func (s *Service) onPreviewReady(ctx context.Context, tx Tx, app App, d *deploy.Deploy, pv *preview.Preview, reported []*zonev1.ProcessType) error {
	if d.Status == deploy.Previewing {
		return nil // a repeated report
	}
	now := s.clock()
	if !d.Status.Open() || app.Deleted || pv.Status != preview.Deploying || pv.DeployID != d.ID {
		if d.Status.Open() {
			if err := d.Cancel(now); err != nil {
				return err
			}
			if err := tx.Update(ctx, d); err != nil {
				return err
			}
		}
		return s.discard(ctx, tx, app, d)
	}
	// The declarations a promote starts its formation with.
	if err := s.saveDeclarations(ctx, tx, d, reported); err != nil {
		return err
	}
	if err := d.ServePreview(now); err != nil {
		return err
	}
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	pv.MarkReady(now, d.ID)
	if err := tx.UpdatePreview(ctx, pv); err != nil {
		return err
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandActivate),
		&zonev1.ActivateRevision{DeployId: d.ID, AppId: d.AppID, Slug: app.Slug, PreviewId: pv.ID})
}
