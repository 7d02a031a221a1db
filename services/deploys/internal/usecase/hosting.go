package usecase

import (
	"context"
	"errors"

	"tori.dev/services/deploys/internal/deploy"
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
	if d.AppID != appID || !d.Running() {
		return nil, false, nil
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
