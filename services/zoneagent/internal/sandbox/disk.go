package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Disks gives each app a filesystem of its own for its trees: an ext4 image of Bytes,
// sparse in Dir (private to the agent), loop-mounted on <AppsDir>/<app>. A write past it
// fails with "no space left on device" inside that filesystem; nothing else on the host
// fills.
type Disks struct {
	Dir   string
	Bytes int64
	Mkfs  string // mkfs.ext4
}

// Image is where the app's disk image lives (present or not).
func (d *Disks) Image(appID string) string { return filepath.Join(d.Dir, appID+".ext4") }

// Ensure mounts the app's filesystem on dir, making it the first time; the root of it
// belongs to uid, private (0700).
func (d *Disks) Ensure(appID, dir string, uid uint32) error {
	if mounted(dir) {
		return nil
	}
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	img := d.Image(appID)
	if _, err := os.Stat(img); errors.Is(err, os.ErrNotExist) {
		if err := d.makeImage(img, uid); err != nil {
			os.Remove(img)
			return err
		}
	}
	// nodev, nosuid: a file the app makes in its tree can never be a device or gain rights.
	if out, err := hostCommand("mount", "-o", "loop,nosuid,nodev", img, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("mount the app's disk: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (d *Disks) makeImage(img string, uid uint32) error {
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(d.Bytes)
	f.Close()
	if err != nil {
		return err
	}
	owner := strconv.FormatUint(uint64(uid), 10)
	// No reserved blocks: the quota is the app's to use whole.
	if out, err := hostCommand(d.Mkfs, "-q", "-F", "-m", "0", "-E", "root_owner="+owner+":"+owner, img).CombinedOutput(); err != nil {
		return fmt.Errorf("make the app's disk: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Release unmounts the app's filesystem and deletes its image.
func (d *Disks) Release(appID, dir string) error {
	if mounted(dir) {
		// Lazy: a process of the app killed a moment ago may still hold the mount.
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount the app's disk: %w", err)
		}
	}
	err := os.Remove(d.Image(appID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// mounted reports whether dir is a mount point (its device differs from its parent's).
func mounted(dir string) bool {
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}
