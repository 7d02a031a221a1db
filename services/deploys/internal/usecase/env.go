package usecase

import (
	"context"

	"tori.dev/services/deploys/internal/deploy"
)

// EnvSource takes environment snapshots for deploys; the apps service seals them.
type EnvSource interface {
	Snapshot(ctx context.Context, appID, deployID string) (deploy.Snapshot, error)
	// Same reports whether two snapshots of the app hold the same variables. Ciphertexts
	// differ even for equal content, so it opens both; the plaintext lives only in the
	// replies and in memory for the comparison.
	Same(ctx context.Context, appID string, a, b deploy.Snapshot) (bool, error)
}
