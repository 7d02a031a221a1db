package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/runner"
)

// newRunner makes the runner of service revisions and clears what a previous run left:
// processes inside the apps folder, and containers no live route names.
func newRunner(ctx context.Context, cfg config.Config, st app.Store, env runner.EnvOpener, logs runner.LogSink, log *slog.Logger) (*runner.Local, error) {
	var fixed *syscall.Credential
	if cfg.RunAsUser != "" {
		u, err := user.Lookup(cfg.RunAsUser)
		if err != nil {
			return nil, fmt.Errorf("ZONE_RUN_AS_USER: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		fixed = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
	}
	appsDir := appsDir(cfg)
	// Traverse-only for others: each app's uid reaches its own folder (0700) and lists nothing.
	if err := os.MkdirAll(appsDir, 0o711); err != nil {
		return nil, err
	}
	if err := os.Chmod(appsDir, 0o711); err != nil {
		return nil, err
	}
	sandbox := runner.NewSandbox(cfg.MemoryBytes, cfg.MaxProcesses, cfg.MaxOpenFiles, fixed)
	cpu := runner.DetectCPUGroups(cfg.Zone)
	log.InfoContext(ctx, "service sandbox", "appsDir", appsDir, "prlimit", sandbox.Prlimit != "", "perAppUIDs", sandbox.PerAppUIDs,
		"fixedUser", cfg.RunAsUser, "cpuCeiling", cpu != nil, "imageRuntime", cfg.ImageRuntime)
	containers, err := containerRuntime(cfg.ImageRuntime)
	if err != nil {
		return nil, err
	}
	local := &runner.Local{
		AppsDir: appsDir, ObjectsDir: cfg.Objects(), Containers: containers, Sandbox: sandbox, CPU: cpu,
		Env: env, Logs: logs, IdleAfter: cfg.IdleAfter,
		Napped: app.Scale{Store: st, Zone: cfg.Zone, Log: log}.Changed, Revision: st.Revision, Log: log,
	}
	if n := local.ReapOrphans(); n > 0 {
		log.WarnContext(ctx, "killed processes a previous run left behind", "count", n)
	}
	live, err := st.Routes(ctx)
	if err != nil {
		return nil, err
	}
	if n, err := local.RecoverContainers(ctx, live); err != nil {
		return nil, fmt.Errorf("recover containers: %w", err)
	} else if n > 0 {
		log.WarnContext(ctx, "removed containers a previous run left behind", "count", n)
	}
	return local, nil
}

// containerRuntime is the CLI ZONE_IMAGE_RUNTIME names (docker, podman or a path), or nil
// when it is unset. A name the host cannot find stops the agent at start rather than
// failing every image deploy later.
func containerRuntime(name string) (runner.ContainerRuntime, error) {
	if name == "" {
		return nil, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("ZONE_IMAGE_RUNTIME: %w", err)
	}
	return runner.CLI{Path: path}, nil
}

// appsDir is where customer trees live. Under root with per-app users, it must be reachable
// by those users, and DATA_DIR (often 0700, and holding the control plane's files) is not;
// so the default is a folder of its own under the system temp dir, named after DATA_DIR.
func appsDir(cfg config.Config) string {
	if cfg.AppsDir != "" {
		return cfg.AppsDir
	}
	abs, _ := filepath.Abs(cfg.DataDir)
	sum := sha256.Sum256([]byte(abs + "\x00" + cfg.Zone))
	return filepath.Join(os.TempDir(), "tori-zone-"+cfg.Zone+"-"+hex.EncodeToString(sum[:6]))
}
