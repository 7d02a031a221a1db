package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"tori.dev/services/zoneagent/internal/store"
)

// activate switches the app's traffic to a ready revision, unless a newer one already
// serves (ids are UUIDv7 and sort by creation): an older revision never replaces a newer.
func (a *Agent) activate(ctx context.Context, r store.Revision) error {
	var previous string
	switched := false
	err := a.Store.InTx(ctx, func(tx store.Tx) error {
		rev, err := tx.Revision(ctx, r.DeployID)
		if err != nil {
			return err
		}
		if rev.State != store.StateReady || rev.DiscardWanted {
			return nil
		}
		live, ok, err := tx.Live(ctx, r.AppID)
		if err != nil {
			return err
		}
		if ok && live.DeployID > r.DeployID {
			if err := tx.SetState(ctx, r.DeployID, store.StateDiscarded); err != nil {
				return err
			}
			return a.publishStep(ctx, tx, r, StepDiscarded, "", "a newer revision serves")
		}
		if ok {
			previous = live.DeployID
			if err := tx.SetState(ctx, live.DeployID, store.StateRetired); err != nil {
				return err
			}
		}
		// The switch itself is idempotent, so doing it before the commit is safe: a failed
		// commit is retried and switches to the same revision again.
		if r.Kind == "static" {
			err = a.switchSite(r.AppID, r.DeployID)
		} else {
			err = a.Runner.Activate(ctx, r, previous)
		}
		if err != nil {
			return err
		}
		if err := tx.SetLive(ctx, store.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind}); err != nil {
			return err
		}
		if err := tx.SetState(ctx, r.DeployID, store.StateActive); err != nil {
			return err
		}
		switched = true
		return a.publishStep(ctx, tx, r, StepActivated, "", "")
	})
	if err != nil || !switched {
		return err
	}
	if err := a.ReloadRoutes(ctx); err != nil {
		return err
	}
	if previous != "" && previous != r.DeployID {
		// The retired revision's process was stopped by the switch; its files go too.
		return a.removeRevision(ctx, store.Revision{AppID: r.AppID, DeployID: previous, Kind: r.Kind})
	}
	return nil
}

// removeRevision deletes a revision's files and stops its process, if any.
func (a *Agent) removeRevision(ctx context.Context, r store.Revision) error {
	if r.Kind == "static" {
		return os.RemoveAll(a.siteDir(r.AppID, r.DeployID))
	}
	if a.Runner == nil {
		return nil
	}
	return a.Runner.Discard(ctx, r.AppID, r.DeployID)
}

// switchSite points <app>/current at the revision's folder with one rename, which replaces
// the old link atomically: every request sees the old site or the new one, never a mix.
func (a *Agent) switchSite(appID, deployID string) error {
	dir := filepath.Join(a.SitesDir, appID)
	b := make([]byte, 6)
	rand.Read(b)
	tmp := filepath.Join(dir, ".current-"+hex.EncodeToString(b))
	if err := os.Symlink(deployID, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "current")); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// discard collects a revision the control plane will never put live.
func (a *Agent) discard(ctx context.Context, r store.Revision) error {
	if err := a.removeRevision(ctx, r); err != nil {
		return err
	}
	return a.Store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetState(ctx, r.DeployID, store.StateDiscarded); err != nil {
			return err
		}
		return a.publishStep(ctx, tx, r, StepDiscarded, "", "")
	})
}

// ForgetApp stops serving a deleted app at once and removes its files and processes. It is
// idempotent: a redelivered delete repeats it harmlessly.
func (a *Agent) ForgetApp(ctx context.Context, appID string) error {
	a.mu.Lock()
	a.forgotten[appID] = true
	a.Table.RemoveApp(appID)
	a.mu.Unlock()
	if a.Runner != nil {
		if err := a.Runner.StopApp(ctx, appID); err != nil {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(a.SitesDir, appID))
}
