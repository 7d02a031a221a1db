package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// UIDTable allocates each app a uid of its own in [lo, hi], the same on every call, until
// it is freed when the app is deleted (in the deletion's own record, store.Tx.DeleteApp). A
// freed uid waits in quarantine (with its last owner's app id) until released: no app gets
// it meanwhile (see SweepUIDs).
type UIDTable interface {
	AllocateUID(ctx context.Context, appID string, lo, hi uint32) (uint32, error)
	QuarantinedUIDs(ctx context.Context) (map[uint32]string, error)
	ReleaseUID(ctx context.Context, uid uint32) error
}

// heldUIDs is a UIDTable that reads the uids apps hold without allocating (store.Store).
type heldUIDs interface {
	AppUIDs(ctx context.Context, appIDs []string) (map[string]uint32, error)
}

// Identities is what makes an app its own on this host, whatever it runs: a uid nobody else
// has, a folder only that uid opens and, with Disks, a filesystem of its own. It takes them
// back when the app is deleted, and hands a freed uid out again only once nothing of its
// last owner is left (SweepUIDs).
type Identities struct {
	AppsDir string // each app's trees: <AppsDir>/<app>/<deploy>
	// Sandbox holds each app's uid once allocated (Credential).
	Sandbox *sandbox.Sandbox
	// UIDs is the zone's allocation table of app uids (a unique one per app); the range is
	// UIDBase+1 .. UIDBase+UIDCount-1 (UIDBase is the sandbox probe's).
	UIDs     UIDTable
	UIDBase  uint32
	UIDCount uint32
	// Disks gives each app its own filesystem (the disk quota); nil keeps trees on AppsDir's.
	Disks *sandbox.Disks
}

// AppDir is the app's folder: its trees, its build cache and its containers' volumes.
func (d *Identities) AppDir(appID string) string { return filepath.Join(d.AppsDir, appID) }

// Tree is where a revision's source lives; its process runs there and sees nothing else.
func (d *Identities) Tree(appID, deployID string) string {
	return filepath.Join(d.AppsDir, appID, deployID)
}

// Ensure looks up (allocating the first time) the app's uid and gives it to the sandbox.
func (d *Identities) Ensure(ctx context.Context, appID string) error {
	if d.Sandbox.Credential(appID) != nil {
		return nil
	}
	if d.UIDs == nil {
		return fmt.Errorf("no uid table")
	}
	// An app that holds a uid already (every app after a restart, on its first wake) needs
	// no sweep: the sweep reads every process and the apps folder, and would make each
	// first wake cost O(apps).
	if held, ok := d.UIDs.(heldUIDs); ok {
		uids, err := held.AppUIDs(ctx, []string{appID})
		if err != nil {
			return fmt.Errorf("look up the app's uid: %w", err)
		}
		if uid, ok := uids[appID]; ok {
			d.Sandbox.SetUID(appID, uid)
			return nil
		}
	}
	// Uids whose last owner has left nothing behind become free first.
	if _, err := d.SweepUIDs(ctx); err != nil {
		slog.WarnContext(ctx, "uid quarantine not swept", "err", err.Error())
	}
	uid, err := d.UIDs.AllocateUID(ctx, appID, d.UIDBase+1, d.UIDBase+d.UIDCount-1)
	if err != nil {
		return fmt.Errorf("allocate the app's uid: %w", err)
	}
	d.Sandbox.SetUID(appID, uid)
	return nil
}

// Disk mounts the app's own filesystem on its folder (see Disks).
func (d *Identities) Disk(appID string) error {
	if d.Disks == nil {
		return nil
	}
	return d.Disks.Ensure(appID, d.AppDir(appID), d.Sandbox.Credential(appID).Uid)
}

// Own hands the tree to the app's uid: its processes may write there and nowhere else.
func (d *Identities) Own(appID, dir string) error {
	cred := d.Sandbox.Credential(appID)
	if cred == nil {
		return fmt.Errorf("app %s has no uid", appID)
	}
	// The app folder is private to the app's uid; AppsDir itself is traverse-only (0711).
	if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Lchown(filepath.Dir(dir), int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// RemoveTree removes a revision's tree (discarded, never to run).
func (d *Identities) RemoveTree(appID, deployID string) error {
	return os.RemoveAll(d.Tree(appID, deployID))
}

// Release takes back what a deleted app had, once its processes are stopped: its
// filesystem and its folder. Its uid is freed by the deletion's record, which commits after
// this returns (store.Tx.DeleteApp): freeing it here through the pool deadlocked once every
// connection was held by a deletion's handler waiting for one more (issue 41's bench).
func (d *Identities) Release(ctx context.Context, appID string) error {
	dir := d.AppDir(appID)
	if d.Disks != nil {
		if err := d.Disks.Release(appID, dir); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if d.UIDs == nil {
		return nil
	}
	d.Sandbox.ForgetUID(appID)
	return nil
}
