package apps

import (
	"context"
	"time"

	"tori.dev/services/apps/internal/accounts"
)

// BuildFunc decides, inside the store's transaction and with the account locked, whether an
// app may be created, and returns it. liveApps counts the account's apps that are not
// deleted: tombstones do not count toward the limit.
type BuildFunc func(acct accounts.Account, liveApps int64) (App, error)

// Store is the persistence the app lifecycle needs. Every method that changes an app also
// writes its event to the outbox in the same transaction.
type Store interface {
	// CreateApp stores the app build returns, with apps.app.created. ErrSlugTaken when a
	// live app or an unreclaimed tombstone holds the slug.
	CreateApp(ctx context.Context, accountID string, build BuildFunc) (App, error)
	// Apps lists the account's live apps, oldest first.
	Apps(ctx context.Context, accountID string) ([]App, error)
	// AppBySlug finds a live app of the account; ErrNotFound otherwise.
	AppBySlug(ctx context.Context, accountID, slug string) (App, error)
	// DeleteApp turns the account's live app into a tombstone awaiting confirmations from
	// the cleanup services (reclaimed at once when there are none), drops the app's own
	// environment and hostnames, and publishes apps.app.deleted. ErrNotFound when there is
	// no such live app.
	DeleteApp(ctx context.Context, accountID, slug string, cleanup []string, at time.Time) (Deletion, error)
}
