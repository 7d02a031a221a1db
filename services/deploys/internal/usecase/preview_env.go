package usecase

import (
	"context"
	"fmt"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// PreviewEnvSource takes a preview's snapshot: the app's variables with the overrides set
// over them, TORI_PREVIEW=1, and without the database variables when asked. The apps client
// (busapi.AppsEnv) is one; an EnvSource that is not cannot make previews of services.
type PreviewEnvSource interface {
	PreviewSnapshot(ctx context.Context, appID, deployID string, overrides map[string]string, withoutDatabase bool) (deploy.Snapshot, error)
}

// previewSnapshot seals the environment of a preview's revision deployID.
func (s *Service) previewSnapshot(ctx context.Context, appID, deployID string, in preview.Input) (deploy.Snapshot, error) {
	src, ok := s.env.(PreviewEnvSource)
	if !ok {
		return deploy.Snapshot{}, fmt.Errorf("%w: no preview snapshots", deploy.ErrSnapshotUnavailable)
	}
	snap, err := src.PreviewSnapshot(ctx, appID, deployID, in.Env, preview.Database(in.Database) == preview.DatabaseNone)
	if err != nil {
		return deploy.Snapshot{}, fmt.Errorf("%w: %v", deploy.ErrSnapshotUnavailable, err)
	}
	if snap.For == "" {
		snap.For = deployID
	}
	return snap, nil
}
