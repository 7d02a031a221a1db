package usecase

import (
	"context"
	"errors"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// The edge's table is loaded whole once, when the agent starts (ReloadRoutes), and from then
// on follows each change to one app or one hostname: no pass reads the whole record, so a
// pass costs the same at 10 apps and at 10,000. Who changes what:
//   - an activation sets the app's route before its report can leave (switch.go);
//   - a delete drops the app before its record commits (ForgetApp);
//   - a preview's activation and removal set it at once (previews.go);
//   - a hostname's, a hold's and an app's account's change is recorded by a consumer: once
//     its transaction commits, the next pass reads that one hostname's or account's rows
//     (routeChanged, refreshRoutes). The edge follows within one pass, as it did when every
//     pass reloaded the table.
// Nothing else writes the live routes, domains, holds or previews, so no periodic reload is
// needed to catch up.

// routeChange names what a consumer changed: one hostname, one app's account or one
// account's hold.
type routeChange struct {
	kind routeChangeKind
	key  string
}

type routeChangeKind uint8

const (
	hostChanged    routeChangeKind = iota + 1 // key: the hostname, lowercase
	appAccountSet                             // key: the app id
	accountHoldSet                            // key: the account id
)

// recheckAfter is when a change is read a second time. A transaction that runs its
// after-commit functions at once (a caller's own, bus.TxOf) may be read before it commits;
// the second read, well after, settles it. It costs one more read by key per change.
const recheckAfter = time.Second

// afterCommitter is a Tx that runs a function once it has committed (store.Tx).
type afterCommitter interface{ AfterCommit(fn func()) }

// routeChanged has the next pass read c again once tx commits, and pokes it.
func (a *Agent) routeChanged(tx Tx, c routeChange) {
	mark := func() {
		a.mu.Lock()
		a.changed[c] = true
		a.mu.Unlock()
		a.Poke()
	}
	if ac, ok := tx.(afterCommitter); ok {
		ac.AfterCommit(mark)
		return
	}
	mark() // a Tx that cannot wait for its commit: the recheck settles it
}

// refreshRoutes brings the table up to date with the changes consumers recorded since the
// last pass; the caller holds passMu, so a refresh never races an activation's route. A
// change that fails to load is tried again by the next pass.
func (a *Agent) refreshRoutes(ctx context.Context) error {
	now := time.Now()
	a.mu.Lock()
	todo := make([]routeChange, 0, len(a.changed))
	for c := range a.changed {
		todo = append(todo, c)
		a.recheck[c] = now.Add(recheckAfter)
	}
	clear(a.changed)
	for c, at := range a.recheck {
		if !now.Before(at) {
			todo = append(todo, c)
			delete(a.recheck, c)
		}
	}
	a.mu.Unlock()
	var errs error
	for _, c := range todo {
		if err := a.refreshRoute(ctx, c); err != nil {
			errs = errors.Join(errs, err)
			a.mu.Lock()
			a.changed[c] = true
			a.mu.Unlock()
		}
	}
	return errs
}

// refreshRoute reads one change's rows and sets the table from them.
func (a *Agent) refreshRoute(ctx context.Context, c routeChange) error {
	switch c.kind {
	case hostChanged:
		app, err := a.store.HostOwner(ctx, c.key)
		if err != nil {
			return err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.forgotten[app] {
			app = ""
		}
		a.table.SetHost(c.key, app)
	case appAccountSet:
		from, err := a.store.AppHold(ctx, c.key)
		if err != nil {
			return err
		}
		a.table.PauseApp(c.key, from)
	case accountHoldSet:
		apps, from, err := a.store.AccountHold(ctx, c.key)
		if err != nil {
			return err
		}
		for _, app := range apps {
			a.table.PauseApp(app, from)
		}
	}
	return nil
}

func hostKey(hostname string) routeChange {
	return routeChange{kind: hostChanged, key: strings.ToLower(hostname)}
}

// restoreRoute sets the app's route from the record: after an activation that put its route
// in the table but whose transaction did not commit.
func (a *Agent) restoreRoute(ctx context.Context, appID string) error {
	live, ok, err := a.store.LiveRoute(ctx, appID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.forgotten[appID]:
	case ok:
		a.table.Set(edgeRoute(live))
	default:
		a.table.Unset(appID)
	}
	return nil
}

func edgeRoute(r revision.Route) edge.Route {
	return edge.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind}
}
