package store

import (
	"context"
	"fmt"
)

// The ingest lock keeps an app's deletion and the storing of its entries apart. Every ingest
// transaction holds it shared (ingests never wait for each other); marking an app deleted
// takes it exclusively, so it waits for every ingest in flight to commit, and every ingest
// that starts after it sees the app as deleted. The cleanup that follows therefore finds every
// entry the app will ever have. Advisory, because the entries of an app not yet known have no
// row to lock.
const ingestLockKey = "tori.logs.ingest"

// LockIngestShared implements usecase.Tx.
func (t Tx) LockIngestShared(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtext($1))`, ingestLockKey); err != nil {
		return fmt.Errorf("store: ingest lock: %w", err)
	}
	return nil
}

// LockIngestExclusive implements usecase.Tx.
func (t Tx) LockIngestExclusive(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, ingestLockKey); err != nil {
		return fmt.Errorf("store: ingest lock: %w", err)
	}
	return nil
}
