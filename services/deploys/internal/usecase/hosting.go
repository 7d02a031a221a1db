package usecase

import (
	"context"
	"errors"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// Hosting answers the apps service before it opens an environment snapshot for a zone:
// whether zone hosts the app's deploy now (the app lives in that zone, and the deploy is
// building, releasing or live), and which deploy's snapshot the deploy uses.
func (s *Service) Hosting(ctx context.Context, zone, appID, deployID string) (envDeployID string, hosted bool, err error) {
	d, hosted, err := s.hostedDeploy(ctx, zone, appID, deployID)
	if err != nil || !hosted {
		return "", false, err
	}
	return d.Env.For, true, nil
}

// hostedDeploy is the app's deploy if zone hosts it now: the deploy is building, releasing
// or live, and the app (not deleted) lives in zone.
func (s *Service) hostedDeploy(ctx context.Context, zone, appID, deployID string) (*deploy.Deploy, bool, error) {
	d, err := s.store.Deploy(ctx, deployID)
	if errors.Is(err, deploy.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if d.AppID != appID {
		return nil, false, nil
	}
	running, err := s.revisionRunning(ctx, d)
	if err != nil || !running {
		return nil, false, err
	}
	var a App
	err = s.store.InTx(ctx, func(tx Tx) error {
		a, err = tx.App(ctx, appID)
		return err
	})
	if errors.Is(err, deploy.ErrAppNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if a.Deleted || a.Zone != zone {
		return nil, false, nil
	}
	return d, true, nil
}

// revisionRunning reports whether d's revision is, or is about to be, on its zone. A
// preview's is while the preview is there and d is its revision under way or the one served.
func (s *Service) revisionRunning(ctx context.Context, d *deploy.Deploy) (bool, error) {
	if d.PreviewID == "" {
		return d.Running(), nil
	}
	p, err := s.store.Preview(ctx, d.PreviewID)
	if errors.Is(err, preview.ErrNotFound) {
		return false, nil
	}
	if err != nil || p.Status.Removed() {
		return false, err
	}
	current := d.ID == p.DeployID && (d.Status.Open() || d.Status == deploy.Previewing)
	return current || (d.ID == p.ServingDeployID && d.Status == deploy.Previewing), nil
}
