package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// makeTrees gives each service app asked WithTree its built tree as preparing it leaves it:
// a copy of the template's, owned by the app's uid, at the root of the app's own disk image
// (sandbox.Disks), which its first wake mounts on <apps>/<app>. The image is made by the
// same mkfs.ext4 call the sandbox makes, populated (-d) instead of mounted and copied into.
func (s *seeder) makeTrees(ctx context.Context, tpl template, apps []App, uids map[string]uint32, parallel int) (int, error) {
	var want []App
	for _, a := range apps {
		if a.WithTree {
			want = append(want, a)
		}
	}
	if len(want) == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(s.disks.Dir, 0o700); err != nil {
		return 0, err
	}
	err := each(ctx, parallel, want, func(ctx context.Context, a App) error {
		if err := s.makeTree(ctx, tpl, a, uids[a.ID]); err != nil {
			return fmt.Errorf("tree of %s: %w", a.Slug, err)
		}
		return nil
	})
	return len(want), err
}

func (s *seeder) makeTree(ctx context.Context, tpl template, a App, uid uint32) error {
	staging, err := os.MkdirTemp("", "zone-seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	owner := strconv.FormatUint(uint64(uid), 10)
	// The app folder is private to the app's uid (Identities.Own), its tree too.
	if err := os.Chmod(staging, 0o700); err != nil {
		return err
	}
	steps := [][]string{
		{"cp", "-a", tpl.tree, filepath.Join(staging, a.DeployID)},
		{"chown", "-R", owner + ":" + owner, staging},
	}
	img := s.disks.Image(a.ID)
	os.Remove(img)
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(s.disks.Bytes)
	f.Close()
	if err != nil {
		return err
	}
	steps = append(steps, []string{s.disks.Mkfs, "-q", "-F", "-m", "0", "-E", "root_owner=" + owner + ":" + owner, "-d", staging, img})
	for _, step := range steps {
		if out, err := exec.CommandContext(ctx, step[0], step[1:]...).CombinedOutput(); err != nil {
			os.Remove(img)
			return fmt.Errorf("%s: %v: %s", step[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
