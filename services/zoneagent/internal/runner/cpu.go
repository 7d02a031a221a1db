package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"tori.dev/services/zoneagent/internal/revision"
)

// cfsPeriod is the CFS period the CPU ceiling is expressed in: a quota of cpu × period.
const cfsPeriod = 100_000

// CPUGroups enforces the plan's CPU ceiling with a cgroup (v1 `cpu` controller) per app: a
// CFS quota of cpu × period lets the app's processes together use at most that many cores.
type CPUGroups struct{ Root string }

// DetectCPUGroups returns the zone's CPU groups when the host lets the agent create them
// under /sys/fs/cgroup/cpu, and nil otherwise (the ceiling is then not enforced).
func DetectCPUGroups(zone string) *CPUGroups {
	root := filepath.Join("/sys/fs/cgroup/cpu", "tori-"+zone)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, "cpu.cfs_quota_us")); err != nil {
		return nil
	}
	return &CPUGroups{Root: root}
}

// Limit moves pid into the app's group, capped at cpu cores. Children the process starts
// afterwards inherit the group.
func (g *CPUGroups) Limit(appID string, cpu float64, pid int) error {
	if g == nil || cpu <= 0 {
		return nil
	}
	dir := filepath.Join(g.Root, appID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	quota := max(int(cpu*cfsPeriod), 1000) // the kernel's minimum quota is 1 ms
	for file, v := range map[string]int{"cpu.cfs_period_us": cfsPeriod, "cpu.cfs_quota_us": quota} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.Itoa(v)), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: %w", file, err)
		}
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// Remove deletes an app's group once its processes are gone.
func (g *CPUGroups) Remove(appID string) {
	if g != nil {
		os.Remove(filepath.Join(g.Root, appID))
	}
}

// limitCPU caps a revision's process; a failure is logged, not fatal: the process runs, only
// without its ceiling.
func (l *Local) limitCPU(ctx context.Context, rev revision.Revision, pid int) {
	if err := l.CPU.Limit(rev.AppID, rev.CPU, pid); err != nil {
		l.Log.WarnContext(ctx, "cpu ceiling not applied", "app", rev.AppID, "err", err.Error())
	}
}
