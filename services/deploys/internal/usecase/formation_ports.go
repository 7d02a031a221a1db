package usecase

import (
	"context"
	"time"

	"tori.dev/services/deploys/internal/deploy"
)

// FormationState is an app's formation bookkeeping: the deploy whose declarations the
// formation follows (the one last told to activate), the generation every formation change
// grows (the zone ignores an older one), and when the zone last reported what runs.
type FormationState struct {
	DeployID   string
	Generation int64
	StatusAt   *time.Time
}

// FormationTx is the formation's part of a transaction.
type FormationTx interface {
	// SaveDeclarations replaces the process types a deploy declares.
	SaveDeclarations(ctx context.Context, deployID string, ps []deploy.Process) error
	// CopyDeclarations gives deploy to the declarations of deploy from (a rollback or a plan
	// redeploy runs the same artifact, so the same processes), keeping any it has.
	CopyDeclarations(ctx context.Context, from, to string) error
	// Declarations are the process types a deploy declares, web first then by name.
	Declarations(ctx context.Context, deployID string) ([]deploy.Process, error)
	// LockFormation loads the app's formation with a row lock (creating its state at
	// generation 0 the first time), so activations, scale requests and the zone's reports
	// of one app take turns.
	LockFormation(ctx context.Context, appID string) (FormationState, []deploy.FormationEntry, error)
	// SaveFormation replaces the app's formation and its state.
	SaveFormation(ctx context.Context, appID string, st FormationState, f []deploy.FormationEntry) error
}
