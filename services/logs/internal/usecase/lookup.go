package usecase

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// AppSource asks the apps service, the apps' owner, for an account's live app by slug. It
// returns ok false when there is none; its errors wrap logs.ErrAppUnavailable.
type AppSource interface {
	LookupApp(ctx context.Context, accountID, slug string) (a logs.App, createdAt time.Time, ok bool, err error)
}

// AppFinder resolves the caller's apps: from the service's own copy, and for an app the copy
// has not heard of yet (its apps.app.created still on its way) from the apps service, whose
// answer it keeps exactly as that event would have. So an app is found the moment its create
// answered, and no read waits on the event.
type AppFinder struct {
	store  Store
	source AppSource
	log    *slog.Logger
}

// NewAppFinder builds the finder over the store and the apps service.
func NewAppFinder(store Store, source AppSource, log *slog.Logger) *AppFinder {
	return &AppFinder{store: store, source: source, log: log}
}

// Target implements AppReader.
func (f *AppFinder) Target(ctx context.Context, accountID, slug string) (Target, error) {
	t, err := f.store.Target(ctx, accountID, slug)
	if !errors.Is(err, logs.ErrNotFound) || accountID == "" {
		return t, err
	}
	a, createdAt, ok, err := f.source.LookupApp(ctx, accountID, slug)
	if err != nil {
		return Target{}, err
	}
	if !ok {
		return Target{}, logs.ErrNotFound
	}
	// The same write as the created event's consumer: a repeat changes nothing and a delete
	// recorded first keeps the app deleted, so the event arriving later is harmless.
	if err := f.store.InTx(ctx, func(tx Tx) error { return (Apps{}).AppCreated(ctx, tx, a, createdAt) }); err != nil {
		return Target{}, err
	}
	f.log.InfoContext(ctx, "app copied from the apps service ahead of its event", "app_id", a.ID)
	// Read back rather than trust the answer: a delete that committed meanwhile wins.
	return f.store.Target(ctx, accountID, slug)
}
