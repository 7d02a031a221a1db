package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/runas"
	"tori.dev/services/zoneagent/internal/supervisor"
)

// edgeProcess is the agent's running edge child, as the runtime's start line and /readyz
// tell of it.
type edgeProcess struct {
	pid  int
	user string
	// posture is "ok", or why the edge runs with the agent's own user (not root).
	posture string
}

// startEdge starts the zone's edge process (the agent's binary again, `zoneagent edge`) as
// ZONE_EDGE_USER with no capability but binding low ports, hands it the folders it may use,
// the table feed (the runtime's table as it is, then each change, each acked) and the link
// it asks the runtime for instances on. The agent's /readyz waits for the edge's; the
// edge's exit stops the agent, naming it (docs/edge-process.md).
func startEdge(p *service.Process, cfg config.Config, env map[string]string, table *edge.Table, runner *supervisor.Local) (*edgeProcess, error) {
	who, err := runas.Lookup(cfg.EdgeUser)
	if err != nil {
		return nil, fmt.Errorf("ZONE_EDGE_USER: %w", err)
	}
	handed, err := edgeFolders(cfg, who)
	if err != nil {
		return nil, err
	}
	defer closeAll(handed)
	sock := filepath.Join(cfg.DataDir, "run", linkSocket)
	ln, err := edgelink.Listen(sock, who.GID)
	if err != nil {
		return nil, fmt.Errorf("edge link: %w", err)
	}
	p.OnClose(func() { ln.Close(); os.Remove(sock) })
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("table feed: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "table feed"), os.NewFile(uintptr(pair[1]), "table feed (edge)")
	defer theirs.Close()
	feedConn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, err
	}
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	// Only CAP_NET_BIND_SERVICE, for ports under 1024; the binary through its descriptor
	// (exeFD): the edge's user needs no way through the folders it lies in.
	cmd, err := runas.Command(who, []string{"net_bind_service"}, fdPath(exeFD), edgeCommand)
	if err != nil {
		return nil, err
	}
	// The address the agent settled on (healthaddr.go) over whatever the environment said.
	cmd.Env = append(edgeEnv(env), "ZONE_EDGE_HEALTH_ADDR="+cfg.EdgeHealthAddr)
	cmd.Dir, cmd.Stdout, cmd.Stderr = "/", os.Stderr, os.Stderr
	cmd.ExtraFiles = append([]*os.File{theirs, exe}, handed...) // feedFD, exeFD, tlsDirFD, cacheDirFD, runDirFD, caRootFD
	// Its own process group: a terminal's ^C reaches the agent, which stops its edge itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the edge process: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	server := &edgelink.Server{Runtime: edgeInstances{table: table, runner: runner}, Log: p.Log,
		Allow: func(peer edgelink.Peer) bool { return int(peer.UID) == who.UID && int(peer.PID) == pid }}
	p.Go("edge link", func(ctx context.Context) error { return server.Serve(ctx, ln) })
	feed := edgelink.NewFeed(feedConn, p.Log)
	p.OnClose(func() { feed.Close() })
	// The table as it is, then every change; each write waits for the edge's ack. The table
	// is never sent whole again unless a change may have been lost on the way.
	go table.Follow(feed.Send)
	p.Every(lifecycle.Job{Name: "edge table resend", Every: 5 * time.Second, Run: func(context.Context) (int64, error) {
		if feed.Unsure() {
			table.Resend()
			return 1, nil
		}
		return 0, nil
	}})
	p.Go("edge process", func(ctx context.Context) error {
		return superviseEdge(ctx, cmd, pid, exited, cfg.ShutdownTimeout, p.Log)
	})
	p.Health.Check("edge", func(ctx context.Context) error { return edgeReady(ctx, cfg.EdgeHealthAddr) })
	p.OnClose(edgeMetrics.show(cfg.EdgeHealthAddr)) // childmetrics.go
	e := &edgeProcess{pid: pid, user: who.Name, posture: "ok"}
	if who.Self {
		e.posture = fmt.Sprintf("the zone agent is not root: its edge runs as the agent's own user %s, not as ZONE_EDGE_USER %s (fine for a developer's machine, not for a zone)", who.Name, cfg.EdgeUser)
	}
	return e, nil
}

// superviseEdge waits for the edge: its exit stops the agent (naming it); the agent's stop
// stops it (SIGTERM: in-flight requests finish), killing it past the shutdown timeout.
func superviseEdge(ctx context.Context, cmd *exec.Cmd, pid int, exited <-chan error, grace time.Duration, log *slog.Logger) error {
	select {
	case err := <-exited:
		return fmt.Errorf("the edge process (pid %d) exited: %v", pid, err)
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace + 5*time.Second):
		log.Warn("the edge process did not stop in time; killed", "pid", pid)
		cmd.Process.Kill()
		<-exited
	}
	return nil
}

// edgeReady asks the edge's own /readyz.
func edgeReady(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return err
	}
	client := http.Client{Timeout: 2 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("edge /readyz: %s", res.Status)
	}
	return nil
}

// edgeFolders makes the folders the edge may use its own (DATA_DIR/tls with the local CA,
// made here first; the site cache) and opens them, with the link's folder and the ACME CA's
// roots (a test's Pebble's, in a folder the edge may not enter), in the order of their
// descriptors (tlsDirFD, cacheDirFD, runDirFD, caRootFD). DATA_DIR itself becomes traverse-only
// for others: the edge lists and reads nothing else of it.
func edgeFolders(cfg config.Config, who runas.User) ([]*os.File, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o711); err != nil {
		return nil, err
	}
	if err := os.Chmod(cfg.DataDir, 0o711); err != nil {
		return nil, err
	}
	tlsDir := filepath.Join(cfg.DataDir, "tls")
	if cfg.TLSEnabled() && cfg.ACMECA == "" {
		if _, err := certs.LoadOrCreateLocalCA(tlsDir); err != nil {
			return nil, err
		}
	}
	runDir := filepath.Join(cfg.DataDir, "run")
	var out []*os.File
	for _, dir := range []string{tlsDir, cfg.EdgeCacheDir(), runDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			closeAll(out)
			return nil, err
		}
		if dir != runDir { // the link's folder stays root's (edgelink.Listen)
			if err := chownTree(dir, who.UID, who.GID); err != nil {
				closeAll(out)
				return nil, err
			}
		}
		f, err := os.Open(dir)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, f)
	}
	caRoot := os.DevNull
	if cfg.ACMECARoot != "" {
		caRoot = cfg.ACMECARoot
	}
	f, err := os.Open(caRoot)
	if err != nil {
		closeAll(out)
		return nil, fmt.Errorf("ZONE_ACME_CA_ROOT: %w", err)
	}
	return append(out, f), nil
}

// chownTree gives a folder and everything in it to uid:gid, the folder 0700.
func chownTree(dir string, uid, gid int) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// edgeEnv is the edge's environment: its own settings (config.EdgeProcess) and what its
// logs, traces, the Go runtime and a DNS-01 hook read; never the agent's other secrets (the broker, the
// managed-database cluster's admin role).
func edgeEnv(env map[string]string) []string {
	if env == nil {
		env = pkgconfig.Environ()
	}
	keep := pkgconfig.Describe(&config.EdgeProcess{})
	var out []string
	for k, v := range env {
		_, own := keep[k]
		if own || goRuntimeEnv[k] || k == "PATH" || k == "HOME" || k == "LOG_LEVEL" || strings.HasPrefix(k, "OTEL_") || strings.HasPrefix(k, "ZONE_TLS_DNS01_") {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// goRuntimeEnv are the Go runtime's settings an operator (or a benchmark) may tune the
// agent with: its edge gets them too.
var goRuntimeEnv = map[string]bool{"GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true, "GODEBUG": true}

// edgeInstances is the runtime's side of the link: the app's revision is the one the
// runtime's own table names, never one the edge names; a paused or static app has none.
type edgeInstances struct {
	table  *edge.Table
	runner *supervisor.Local
}

func (i edgeInstances) Wake(ctx context.Context, appID string) ([]string, error) {
	route, ok := i.table.Route(appID)
	if !ok || route.Kind.Static() || i.table.Paused(appID, time.Now()) {
		return nil, edgelink.ErrGone
	}
	return i.runner.Wake(ctx, route)
}

// WakePreview wakes the preview the runtime's own table names for the app; a removed,
// unknown, static or paused preview has none.
func (i edgeInstances) WakePreview(ctx context.Context, appID, previewID string) ([]string, error) {
	route, ok := i.table.PreviewRoute(appID, previewID)
	if !ok || route.Kind.Static() || i.table.Paused(appID, time.Now()) {
		return nil, edgelink.ErrGone
	}
	return i.runner.WakePreview(ctx, route)
}

func (i edgeInstances) Dial(ctx context.Context, instanceID string) (net.Conn, error) {
	return i.runner.Dial(ctx, instanceID)
}
