package usecase

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// AppSource asks the apps service, the apps' owner, for a team's live app by slug. It
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
	if !errors.Is(err, logs.ErrNotFound) || accountID == "" || f.source == nil {
		return t, err
	}
	if err := f.copyFromOwner(ctx, accountID, slug); err != nil {
		return Target{}, err
	}
	// Read back rather than trust the answer: a delete that committed meanwhile wins.
	return f.store.Target(ctx, accountID, slug)
}

// AppTeam is the team that owns the live app slug, for the access gate: from the copy, else
// asked of the apps service on behalf of each of teams (the caller's) in turn, keeping the
// answer as Target does. found is false for an app none of them owns, or a deleted one.
func (f *AppFinder) AppTeam(ctx context.Context, teams []string, slug string) (string, bool, error) {
	team, found, err := f.store.AppTeam(ctx, slug)
	if err != nil || found || f.source == nil {
		return team, found, err
	}
	for _, t := range teams {
		err := f.copyFromOwner(ctx, t, slug)
		if errors.Is(err, logs.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		// Read back rather than trust the answer: a delete that committed meanwhile wins.
		return f.store.AppTeam(ctx, slug)
	}
	return "", false, nil
}

// copyFromOwner asks the apps service for the team's live app slug and keeps the answer;
// logs.ErrNotFound when it has none.
func (f *AppFinder) copyFromOwner(ctx context.Context, accountID, slug string) error {
	a, createdAt, ok, err := f.source.LookupApp(ctx, accountID, slug)
	if err != nil {
		return err
	}
	if !ok {
		return logs.ErrNotFound
	}
	// The same write as the created event's consumer: a repeat changes nothing and a delete
	// recorded first keeps the app deleted, so the event arriving later is harmless.
	if err := f.store.InTx(ctx, func(tx Tx) error { return (Apps{}).AppCreated(ctx, tx, a, createdAt) }); err != nil {
		return err
	}
	f.log.InfoContext(ctx, "app copied from the apps service ahead of its event", "app_id", a.ID)
	return nil
}
