package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/runas"
)

// What the agent tells its database host besides its configuration: the helper's socket and
// its own pid (the host checks it still has that parent once it has asked to die with it).
const (
	helperSocketEnv = "ZONE_DATABASES_HELPER_SOCKET"
	hostParentEnv   = "ZONE_DATABASES_PARENT_PID"
)

// errNoExe: the agent cannot open its own binary to start the host from.
var errNoExe = errors.New("the agent's own binary cannot be opened")

// hostExeFD is where the host finds the agent's binary: an open file the agent hands it, so it
// starts from a binary in a folder its user cannot reach (a test binary's, a private build's).
const hostExeFD = 3

// prepareDatabaseHost finds the host's user, makes its folder (its own, 0700) and its
// environment.
func prepareDatabaseHost(cfg config.Config, env map[string]string, logs io.Writer, log *slog.Logger) (*databaseHost, error) {
	h := &databaseHost{cfg: cfg, logs: logs, log: log}
	who, err := runas.Lookup(cfg.DatabasesUser)
	if err != nil {
		return nil, fmt.Errorf("the database host's user (ZONE_DATABASES_USER): %w", err)
	}
	if who.Self {
		log.Warn("the agent is not root: its database host runs as the agent's own user")
	}
	h.who, h.uid, h.gid = who, uint32(who.UID), uint32(who.GID)
	dir, err := databasesDir(cfg)
	if err != nil {
		return nil, err
	}
	h.dir = dir
	if err := h.makeFolder(); err != nil {
		return nil, err
	}
	if env == nil {
		env = pkgconfig.Environ()
	}
	h.env = hostEnviron(env)
	if _, ok := env["PATH"]; !ok {
		h.env = append(h.env, "PATH="+os.Getenv("PATH")) // a test's map names its settings alone
	}
	h.env = append(h.env, "ZONE_DATABASES_DIR="+dir, "ZONE_DATABASES_HEALTH_ADDR="+cfg.DatabasesHealthAddr, hostParentEnv+"="+strconv.Itoa(os.Getpid()))
	return h, nil
}

// databasesDir is ZONE_DATABASES_DIR, absolute; by default a folder of the zone's (and its
// DATA_DIR's) under /var/lib/tori: DATA_DIR may sit where the host's user cannot reach. An
// agent that is not root runs the host as itself, and keeps it in DATA_DIR/dbhost.
func databasesDir(cfg config.Config) (string, error) {
	if cfg.DatabasesDir != "" {
		return filepath.Abs(cfg.DatabasesDir)
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", err
	}
	if os.Geteuid() != 0 {
		return filepath.Join(abs, "dbhost"), nil
	}
	sum := sha256.Sum256([]byte(abs + "\x00" + cfg.Zone))
	return filepath.Join("/var/lib/tori", "dbhost-"+cfg.Zone+"-"+hex.EncodeToString(sum[:6])), nil
}

// makeFolder makes the host's folder its user's alone, and moves the pooler's record there
// from DATA_DIR/pooler, where an agent that hosted the databases itself kept it.
func (h *databaseHost) makeFolder() error {
	if err := os.MkdirAll(filepath.Dir(h.dir), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return err
	}
	old := filepath.Join(h.cfg.DataDir, "pooler", "state.json")
	moved := filepath.Join(h.dir, "pooler", "state.json")
	if _, err := os.Stat(moved); errors.Is(err, fs.ErrNotExist) {
		if b, err := os.ReadFile(old); err == nil {
			if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(moved, b, 0o600); err != nil {
				return err
			}
			_ = os.RemoveAll(filepath.Dir(old))
			h.log.Info("the pooler's record moved to the database host's folder", "from", old, "to", moved)
		}
	}
	if h.who.Self {
		return nil
	}
	// Everything in it is the host's (files an earlier agent made as root included).
	return filepath.WalkDir(h.dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(h.uid), int(h.gid))
	})
}

// hostEnviron is what of env the host gets: its configuration's variables
// (config.DatabaseHost), PATH, LOG_LEVEL and OTEL_*; no other secret of the agent's.
func hostEnviron(env map[string]string) []string {
	keep := map[string]bool{"PATH": true, "LOG_LEVEL": true}
	for _, n := range (config.DatabaseHost{}).EnvNames() {
		keep[n] = true
	}
	var out []string
	for k, v := range env {
		if keep[k] || strings.HasPrefix(k, "OTEL_") {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// command is the host's process: the agent's binary (handed over open, hostExeFD) in databases
// mode, as the host's user with no supplementary group, no capability (none kept, none in
// the bounding set, none to inherit) and no_new_privs (setpriv, util-linux), in its folder.
// Go's Pdeathsig does not survive setpriv's change of user: the host asks for it again
// (dbhostmain.go).
func (h *databaseHost) command() (*exec.Cmd, error) {
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoExe, err)
	}
	cmd, err := runas.Command(h.who, nil, "/proc/self/fd/"+strconv.Itoa(hostExeFD), databasesArg)
	if err != nil {
		exe.Close()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{exe} // fd 3
	cmd.Env = append([]string{helperSocketEnv + "=" + h.socket}, h.env...)
	cmd.Dir = h.dir
	cmd.Stdout, cmd.Stderr = h.logs, h.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}
