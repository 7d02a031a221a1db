package supervisor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// leftoverRoots are the host folders a process of an app's uid could have left a file in
// besides its own tree: the world-writable ones (a sandbox reaches none of them, but the
// agent's pasta pid files live in the temporary folder, and an escape would use them).
var leftoverRoots = []string{os.TempDir(), "/var/tmp", "/dev/shm", "/dev/mqueue"}

// SweepUIDs releases every quarantined uid of which nothing is left on the host: no process
// runs as it (any of its ids), no file belongs to it in the zone's apps folder (its last
// app's tree above all) or in the host's world-writable folders, and its last app's disk
// image is gone. A uid with anything left stays in quarantine, so a new app never inherits
// a process or a file of the tenant before it. It returns how many were released.
func (d *Identities) SweepUIDs(ctx context.Context) (int, error) {
	waiting, err := d.UIDs.QuarantinedUIDs(ctx)
	if err != nil || len(waiting) == 0 {
		return 0, err
	}
	left := processIDsOf(waiting)
	for uid, n := range filesOf(waiting, append([]string{d.AppsDir}, leftoverRoots...)) {
		left[uid] += n
	}
	released := 0
	for uid, app := range waiting {
		if left[uid] > 0 {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d.AppsDir, app)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if d.Disks != nil {
			if _, err := os.Lstat(d.Disks.Image(app)); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if err := d.UIDs.ReleaseUID(ctx, uid); err != nil {
			return released, err
		}
		released++
	}
	return released, nil
}

// processIDsOf counts the host's processes whose real, effective, saved or filesystem uid
// or gid is one of uids (an app's gid is its uid).
func processIDsOf(uids map[uint32]string) map[uint32]int {
	found := map[uint32]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // ended meanwhile
		}
		seen := map[uint32]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			rest, ok := strings.CutPrefix(line, "Uid:")
			if !ok {
				rest, ok = strings.CutPrefix(line, "Gid:")
			}
			if !ok {
				continue
			}
			for _, f := range strings.Fields(rest) {
				if id, err := strconv.ParseUint(f, 10, 32); err == nil {
					if _, q := uids[uint32(id)]; q && !seen[uint32(id)] {
						seen[uint32(id)] = true
						found[uint32(id)]++
					}
				}
			}
		}
	}
	return found
}

// filesOf counts the files and folders under roots owned (user or group) by one of uids. It
// goes down only into folders such a uid could have written in: its own and world-writable
// ones; others hold nothing it made.
func filesOf(uids map[uint32]string, roots []string) map[uint32]int {
	found := map[uint32]int{}
	owner := func(st *syscall.Stat_t) (uint32, bool) {
		if _, ok := uids[st.Uid]; ok {
			return st.Uid, true
		}
		if _, ok := uids[st.Gid]; ok {
			return st.Gid, true
		}
		return 0, false
	}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return nil
			}
			uid, owned := owner(st)
			if owned && p != root {
				found[uid]++
			}
			if d.IsDir() && p != root && !owned && info.Mode().Perm()&0o002 == 0 {
				return fs.SkipDir
			}
			return nil
		})
	}
	return found
}
