package usecase

import (
	"context"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// Apps keeps the service's copy of apps: who owns which slug, and which are deleted.
type Apps struct{}

// AppCreated records a created app.
func (Apps) AppCreated(ctx context.Context, tx Tx, a logs.App, createdAt time.Time) error {
	return tx.SaveApp(ctx, a, createdAt)
}

// AppDeleted marks the app deleted, which makes its route 404 from the commit on and queues
// the cleanup of its entries. It first waits for every ingest in flight (the ingest lock),
// so the cleanup finds every entry the app will ever have.
func (Apps) AppDeleted(ctx context.Context, tx Tx, a logs.App, deletedAt time.Time) error {
	if err := tx.LockIngestExclusive(ctx); err != nil {
		return err
	}
	return tx.MarkAppDeleted(ctx, a, deletedAt)
}
