package managed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/sizecap"
)

// A full database filesystem must never keep the cluster from recovering (docs/
// tenants-ceilings.md). Redo writes a page into every block a WAL record since the last
// checkpoint names, so a table filled, touched, dropped (its space freed at once) and the
// room filled again needs its first body back during recovery: more than the owner ever held
// at once. So each filesystem also holds a crash reserve, a file inside the tablespace's
// pgsql_tmp folder. Postgres itself removes every pgsql_tmp* file of every tablespace when the
// postmaster starts and after a backend crash, before redo runs (RemovePgTempFiles), so the
// reserve is free exactly when recovery needs it, with no agent running; the owner never
// reaches it otherwise (its blocks are allocated, and the owner has no file access). The
// agent makes it again once the filesystem has room (Watch), and asks for a checkpoint when
// the owner frees more than half of it, so no more than that is ever waiting to be redone.

// crashReserveName starts with Postgres's temporary-file prefix (pgsql_tmp) and cannot be
// one of its own (those are pgsql_tmp<pid>.<n>).
const crashReserveName = "pgsql_tmp_zone_crash_reserve"

// metadataBytes is what ext4's own metadata takes of an image for a ceiling of size bytes
// (the journal, the inode tables). The image is that much larger than the ceiling, so even
// with every reserve gone the owner's files stay under the ceiling: pg_database_size never
// passes 110 % of the cap.
func metadataBytes(size int64) int64 { return journalMiB(size)<<20 + size/bytesPerInode*inodeBytes }

// crashReserveBytes is the crash reserve of a database whose ceiling is size bytes: 2 % of
// it, at least 1 MiB and never more than the image's room above the ceiling. It comes out of
// the owner's room while it is kept, so it stays small enough that the owner still passes its
// cap (and is told so, read-only) before the filesystem refuses it; a smaller reserve only
// has the watch ask for checkpoints after smaller frees.
func crashReserveBytes(size int64) int64 {
	return min(max(size/50, 1<<20), metadataBytes(size))
}

// imageBytes is the size of the image of a database whose cap is capBytes: its ceiling and
// room for ext4's metadata.
func imageBytes(capBytes int64) int64 {
	size := sizecap.Ceiling(capBytes)
	return size + metadataBytes(size)
}

// tempDir is database name's tablespace's pgsql_tmp folder, made (the cluster's user's,
// 0700, as Postgres makes it) when missing; "" when the tablespace is not there yet.
func (c *Ceilings) tempDir(name string) (string, error) {
	versions, err := filepath.Glob(filepath.Join(c.Location(name), "PG_*"))
	if err != nil || len(versions) != 1 {
		return "", err
	}
	dir := filepath.Join(versions[0], "pgsql_tmp")
	if err := os.Mkdir(dir, 0o700); err == nil {
		uid, gid, err := LookupUser(c.Owner)
		if err != nil {
			return "", err
		}
		if err := os.Chown(dir, int(uid), int(gid)); err != nil {
			return "", err
		}
	} else if !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, nil
}

// crashReserve is the path of database name's crash reserve ("" before its tablespace).
func (c *Ceilings) crashReserve(name string) string {
	dir, err := c.tempDir(name)
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, crashReserveName)
}

// keepCrashReserve makes database name's crash reserve when it is missing and the
// filesystem has room for it and the same again; it reports whether the reserve is held.
func (c *Ceilings) keepCrashReserve(name string, size int64) (bool, error) {
	path := c.crashReserve(name)
	if path == "" {
		return false, nil
	}
	if _, err := os.Stat(path); err == nil {
		return true, nil
	}
	want := crashReserveBytes(size)
	if c.free(name) < 2*want {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	// Allocated, not sparse: the blocks are really taken (unwritten extents, so the image
	// on the host stays sparse).
	err = syscall.Fallocate(int(f.Fd()), 0, 0, want)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return false, fmt.Errorf("managed: the database's crash reserve: %w", err)
	}
	return true, nil
}

// used is what database name's filesystem holds (reserves included).
func (c *Ceilings) used(name string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.mountPoint(name), &st); err != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// Watch keeps database name's crash reserve and reports whether a checkpoint is due: the
// owner freed more than half the reserve since the last one Watch asked for (or since the
// agent started), so redo could need that much back.
func (c *Ceilings) Watch(name string, capBytes int64) (checkpoint bool, err error) {
	if !ValidName(name) || !mounted(c.mountPoint(name)) {
		return false, nil
	}
	size := sizecap.Ceiling(capBytes)
	if _, err := c.keepCrashReserve(name, size); err != nil {
		return false, err
	}
	used := c.used(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.highWater == nil {
		c.highWater = map[string]int64{}
	}
	high := max(c.highWater[name], used)
	if high-used > crashReserveBytes(size)/2 {
		c.highWater[name] = used
		return true, nil
	}
	c.highWater[name] = high
	return false, nil
}

// Checkpoint asks the cluster for a checkpoint (as its superuser: the provisioning role may
// not), after which nothing the owner freed has to be redone.
func (c *Ceilings) Checkpoint(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.SuperURL)
	if err != nil {
		return fmt.Errorf("managed: connect to the zone cluster as its superuser: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("managed: checkpoint: %w", err)
	}
	return nil
}

// WatchAll runs Watch on every database of caps (name: its cap) and one checkpoint when any
// asks for it; it reports how many databases asked.
func (c *Ceilings) WatchAll(ctx context.Context, caps map[string]int64) (int64, error) {
	var due int64
	var errs []error
	for name, capBytes := range caps {
		ok, err := c.Watch(name, capBytes)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		if ok {
			due++
		}
	}
	if due > 0 {
		if err := c.Checkpoint(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return due, errors.Join(errs...)
}

// DropCrashReserve removes database name's crash reserve: DROP TABLESPACE refuses a
// tablespace whose pgsql_tmp holds a file.
func (c *Ceilings) DropCrashReserve(name string) error {
	versions, err := filepath.Glob(filepath.Join(c.Location(name), "PG_*", "pgsql_tmp", crashReserveName))
	if err != nil {
		return err
	}
	for _, path := range versions {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
