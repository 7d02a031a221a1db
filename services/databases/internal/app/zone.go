package app

import (
	"context"

	"tori.dev/services/databases/internal/database"
)

// requested tells the app's zone to provision d, in the transaction that records it.
// Provisioning by the zone is not wired yet (issue 13, step 3): d stays provisioning.
func (s *Databases) requested(context.Context, Tx, database.Database) error { return nil }

// dropRequested tells the zone to drop d, in the transaction that marks it deleting.
func (s *Databases) dropRequested(context.Context, Tx, database.Database) error { return nil }
