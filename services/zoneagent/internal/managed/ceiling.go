package managed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/sizecap"
)

// The hard ceiling under a database's soft cap. The size check (internal/usecase/dbsize.go)
// makes a database read-only over its cap, but a transaction that begins with SET
// TRANSACTION READ WRITE (the contract's way out) may still write, and so may temporary
// files. So each database's files live in a tablespace of its own on an ext4 filesystem of
// its own, an image of 110 % of the cap (and a crash reserve the owner never reaches:
// crashreserve.go) loop-mounted for it: past that, any write fails with "no space left on
// device" while TRUNCATE and DROP still free space. The owner
// cannot move its files elsewhere: a tablespace takes CREATE, which it has on none (its
// database's own tablespace needs none), and temp_tablespaces ignores the ones it may not use.
//
// CREATE TABLESPACE needs a superuser. The provisioning role is none, so the agent's root
// helper (internal/dbhelper: Ceilings runs there, as root on the cluster's host, to mount
// filesystems) logs in as postgres over the cluster's Unix socket (peer authentication maps
// root to postgres, as for bin/bootstrap) for that one statement, and makes the provisioning
// role the tablespace's owner: everything else (CREATE DATABASE … TABLESPACE, DROP
// TABLESPACE) the database host does as that role.

// A filesystem filled to the last block would refuse the recovery too (TRUNCATE creates a file
// and writes catalog rows), so each keeps a reserve: files of root's inside the image (the
// ceiling holds either way) that the zone gives back, one at a time, when it finds the
// filesystem full (Tend, at every size check), and makes again once there is room. One at a
// time, and only once the filesystem has stayed full from one check to the next: a writer
// still writing when the filesystem filled would take a reserve given back at once, and the
// recovery would find none left (the owner's writes fail, it stops, then it truncates).

// Ceilings makes, mounts, grows and removes the databases' filesystems and their tablespaces.
type Ceilings struct {
	// ImagesDir holds the images (DATA_DIR/databases, the agent's alone).
	ImagesDir string
	// MountsDir holds the mount points; the cluster's OS user must be able to reach into it.
	MountsDir string
	// SuperURL logs in as the cluster's superuser over its Unix socket (peer), used for
	// CREATE TABLESPACE alone.
	SuperURL string
	// Owner is the cluster's OS user (postgres): the tablespace's folder is its.
	Owner        string
	Mkfs, Resize string // mkfs.ext4, resize2fs
	Log          *slog.Logger

	mu sync.Mutex
	// fullAtLastCheck names the databases whose filesystem Tend last found full.
	fullAtLastCheck map[string]bool
	// highWater is each filesystem's most used bytes since Watch last asked for a checkpoint.
	highWater map[string]int64
}

func (c *Ceilings) image(name string) string { return filepath.Join(c.ImagesDir, name+".ext4") }
func (c *Ceilings) mountPoint(name string) string {
	return filepath.Join(c.MountsDir, name)
}

// Location is the tablespace's folder: inside the mounted filesystem, so while it is not
// mounted the folder does not exist and no write lands on the host's disk.
func (c *Ceilings) Location(name string) string { return filepath.Join(c.mountPoint(name), "data") }

// Ensure brings database name's filesystem to a ceiling for capBytes (made, mounted, grown
// online when the cap rose; never shrunk: see the README) and its tablespace (named as the
// database, owned by tablespaceOwner) into being. Run again, it changes nothing.
func (c *Ceilings) Ensure(ctx context.Context, name string, capBytes int64, tablespaceOwner string) error {
	if !ValidName(name) || capBytes <= 0 {
		return fmt.Errorf("managed: ceiling %q: invalid name or cap", name)
	}
	if err := c.Mount(name, capBytes); err != nil {
		return err
	}
	if err := c.ensureTablespace(ctx, name, tablespaceOwner); err != nil {
		return err
	}
	_, err := c.keepCrashReserve(name, sizecap.Ceiling(capBytes))
	return err
}

// Mount makes (the first time) and mounts database name's filesystem, growing it to the
// ceiling of capBytes if it is smaller.
func (c *Ceilings) Mount(name string, capBytes int64) error {
	uid, gid, err := LookupUser(c.Owner)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.ImagesDir, 0o700); err != nil {
		return err
	}
	// Traverse-only: the cluster reaches its tablespace's folder and lists nothing.
	if err := os.MkdirAll(c.MountsDir, 0o711); err != nil {
		return err
	}
	img, dir, want := c.image(name), c.mountPoint(name), imageBytes(capBytes)
	if _, err := os.Stat(img); errors.Is(err, os.ErrNotExist) {
		if err := c.makeImage(img, want); err != nil {
			os.Remove(img)
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	if !mounted(dir) {
		// The database's files are data: nothing on the filesystem runs or is a device.
		if out, err := exec.Command("mount", "-o", "loop,nosuid,nodev,noexec", img, dir).CombinedOutput(); err != nil {
			return fmt.Errorf("managed: mount the database's filesystem: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	data := c.Location(name)
	if err := os.Mkdir(data, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.Chown(data, int(uid), int(gid)); err != nil {
		return err
	}
	if err := c.grow(img, dir, want); err != nil {
		// Online growth needs CAP_SYS_RESOURCE; without it the filesystem keeps its size
		// (the database stays bounded, by the smaller ceiling) and the soft cap the new one.
		if c.Log != nil {
			c.Log.Warn("a database's filesystem could not grow to its new cap", "database", name, "err", err.Error())
		}
	}
	// A filesystem made before the reserve came in parts holds it as one file.
	if err := os.Remove(filepath.Join(dir, "reserve")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if ceiling := sizecap.Ceiling(capBytes); c.free(name) > 2*reserveBytes(ceiling) {
		return c.makeReserves(name, ceiling)
	}
	return nil
}

// reserveParts is how many files the reserve is kept in.
const reserveParts = 4

func (c *Ceilings) reserve(name string, part int) string {
	return filepath.Join(c.mountPoint(name), "reserve."+strconv.Itoa(part))
}

// reserveBytes is the room kept back for the recovery: 1 % of the filesystem, 1 to 16 MiB.
func reserveBytes(size int64) int64 { return min(max(size/100, 1<<20), 16<<20) }

// reservePartBytes is one part of it: also the free room under which the filesystem is full.
func reservePartBytes(size int64) int64 { return reserveBytes(size) / reserveParts }

// heldReserves are the parts of database name's reserve still kept, in order.
func (c *Ceilings) heldReserves(name string) []int {
	var held []int
	for part := range reserveParts {
		if _, err := os.Stat(c.reserve(name, part)); err == nil {
			held = append(held, part)
		}
	}
	return held
}

// free is what the filesystem has left for the cluster's user (no blocks are reserved).
func (c *Ceilings) free(name string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.mountPoint(name), &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize
}

// makeReserves makes every missing part of database name's reserve.
func (c *Ceilings) makeReserves(name string, size int64) error {
	for part := range reserveParts {
		path := c.reserve(name, part)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		// Allocated, not sparse: the blocks are really taken.
		err = syscall.Fallocate(int(f.Fd()), 0, 0, reservePartBytes(size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return fmt.Errorf("managed: the database's reserve: %w", err)
		}
	}
	return nil
}

// Tend gives back one part of database name's reserve when its filesystem has stayed full
// since the last check, so the contract's recovery (truncate in a READ WRITE transaction) can
// run, and keeps the whole reserve again once there is room. It reports whether the
// filesystem was found full.
func (c *Ceilings) Tend(name string, capBytes int64) (bool, error) {
	if !ValidName(name) || !mounted(c.mountPoint(name)) {
		return false, nil
	}
	size, free := sizecap.Ceiling(capBytes), c.free(name)
	full, held := free < reservePartBytes(size), c.heldReserves(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fullAtLastCheck == nil {
		c.fullAtLastCheck = map[string]bool{}
	}
	stayedFull := full && c.fullAtLastCheck[name]
	// Once a part is given back the filesystem has room again: a writer must fill it anew,
	// and be seen full at two checks, before the next part goes.
	c.fullAtLastCheck[name] = full && !(stayedFull && len(held) > 0)
	switch {
	case stayedFull && len(held) > 0:
		if c.Log != nil {
			c.Log.Info("a full database filesystem gets part of its reserve back", "database", name, "free_bytes", free, "parts_left", len(held)-1)
		}
		return true, os.Remove(c.reserve(name, held[0]))
	case stayedFull && c.Log != nil:
		c.Log.Warn("a full database filesystem has no reserve left", "database", name, "free_bytes", free)
	case !full && len(held) < reserveParts && free > 2*reserveBytes(size):
		return false, c.makeReserves(name, size)
	}
	return full, nil
}

// bytesPerInode and inodeBytes size the image's inode tables (mkfs.ext4 -i, and its inode size).
const (
	bytesPerInode = 32768
	inodeBytes    = 256
)

// journalMiB is the journal of an image of size bytes: about 1/64 of it, 4 to 64 MiB.
func journalMiB(size int64) int64 { return min(max(size>>26, 4), 64) }

func (c *Ceilings) makeImage(img string, size int64) error {
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		return err
	}
	// No blocks reserved for root (the cluster is not root), one inode per 32 KiB (a
	// database is few, large files) and a journal of about 1/64 of the image: the cap stays
	// reachable under the ceiling (a 256 MiB cap gets about 270 MiB of room in 282 MiB).
	args := []string{"-q", "-F", "-m", "0", "-b", "4096", "-i", strconv.Itoa(bytesPerInode), "-J", "size=" + strconv.FormatInt(journalMiB(size), 10), img}
	if out, err := exec.Command(c.Mkfs, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("managed: make the database's filesystem: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// grow enlarges a mounted filesystem to size online (a plan with a larger cap).
func (c *Ceilings) grow(img, dir string, size int64) error {
	fi, err := os.Stat(img)
	if err != nil || fi.Size() >= size {
		return err
	}
	dev, err := mountSource(dir)
	if err != nil {
		return err
	}
	if err := os.Truncate(img, size); err != nil {
		return err
	}
	for _, argv := range [][]string{{"losetup", "-c", dev}, {c.Resize, dev}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("managed: grow the database's filesystem: %s: %v: %s", argv[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

func (c *Ceilings) ensureTablespace(ctx context.Context, name, owner string) error {
	conn, err := pgx.Connect(ctx, c.SuperURL)
	if err != nil {
		return fmt.Errorf("managed: connect to the zone cluster as its superuser: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_tablespace WHERE spcname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("managed: look up tablespace %s: %w", name, err)
	}
	if exists {
		return nil
	}
	stmt := "CREATE TABLESPACE " + pgx.Identifier{name}.Sanitize() + " OWNER " + pgx.Identifier{owner}.Sanitize() +
		" LOCATION " + quoteLiteral(c.Location(name))
	if _, err := conn.Exec(ctx, stmt); err != nil && !isCode(err, "42710") {
		return fmt.Errorf("managed: create tablespace %s: %w", name, err)
	}
	return nil
}

// Release unmounts database name's filesystem and deletes its image; its tablespace must be
// gone (DROP TABLESPACE, as its owner). What is already gone is not an error.
func (c *Ceilings) Release(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("managed: release %q: invalid name", name)
	}
	c.mu.Lock()
	delete(c.fullAtLastCheck, name)
	delete(c.highWater, name)
	c.mu.Unlock()
	dir := c.mountPoint(name)
	if mounted(dir) {
		// Lazy: a backend that just ended may hold a file for a moment.
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("managed: unmount the database's filesystem: %w", err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(c.image(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// The folder of mount points goes with the last database (a later Mount makes it again).
	_ = os.Remove(c.MountsDir)
	return nil
}

// Remount mounts every database filesystem whose image exists (at the agent's start: a
// reboot unmounts them, and until they are back their databases' files cannot be reached).
func (c *Ceilings) Remount(caps map[string]int64) error {
	var errs []error
	for name, capBytes := range caps {
		if _, err := os.Stat(c.image(name)); err != nil {
			continue
		}
		if err := c.Mount(name, capBytes); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// mounted reports whether dir is a mount point (its device differs from its parent's).
func mounted(dir string) bool {
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

// mountSource is the device mounted on dir (/proc/self/mountinfo).
func mountSource(dir string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options … - fstype source superoptions
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[4] != dir {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+2 < len(fields) {
				return fields[i+2], nil
			}
		}
	}
	return "", fmt.Errorf("managed: %s is not mounted", dir)
}
