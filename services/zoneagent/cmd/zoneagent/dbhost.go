package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/service"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/dbhelper"
	"tori.dev/services/zoneagent/internal/managed"
	"tori.dev/services/zoneagent/internal/runas"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// The zone's managed databases run in a process of their own, the database host (docs/
// database-host.md): this binary again (`zoneagent databases`, dbhostmain.go), started by
// the agent as ZONE_DATABASES_USER with no capability, and the agent's root process answers
// its few privileged steps (internal/dbhelper). Without ZONE_POSTGRES_ADMIN_URL there is no
// host: the agent itself answers the databases' commands with failed, as before.

// hostDatabases adds the zone's managed databases to the agent: the database host and its
// root helper when the zone hosts them, the commands' refusals otherwise.
func hostDatabases(p *service.Process, cfg config.Config, st *store.Store, env map[string]string, logs io.Writer) error {
	if !cfg.Enabled() {
		dbs, err := databasesNotHosted(cfg, st, p.Log)
		if err != nil {
			return err
		}
		serveDatabaseBus(p, cfg.Zone, dbs)
		return nil
	}
	host, err := prepareDatabaseHost(cfg, env, logs, p.Log)
	if err != nil {
		return err
	}
	helper, err := databaseHelper(p, cfg, host)
	if err != nil {
		return err
	}
	// The agent is ready once its database host is (its queues bound, its pooler up).
	p.Health.Check("databases", host.ready)
	p.OnClose(databaseMetrics.show(cfg.DatabasesHealthAddr)) // childmetrics.go
	p.Go("database host", func(ctx context.Context) error { return host.run(ctx, helper) })
	return nil
}

// serveDatabaseBus adds the databases' consumer and responders to p (the host's, or the
// agent's own when the zone hosts none).
func serveDatabaseBus(p *service.Process, zone string, dbs *usecase.Databases) {
	p.Consume(busapi.DatabaseSubscription(zone, dbs))
	// Only the apps service, which writes DATABASE_URL, learns a database's password.
	p.Respond("database credentials", zonebus.DatabaseCredentialsQueue(zone), bus.OnlyFrom(bus.Is(bus.PrincipalApps), busapi.DatabaseCredentials(dbs)))
	// Only the databases service, which checked whose the dump is, asks for its URL or
	// has pruned dumps deleted.
	p.Respond("dump URL", zonebus.DumpURLQueue(zone), bus.OnlyFrom(bus.Is(bus.PrincipalDatabases), busapi.DumpURL(dbs)))
	p.Respond("dump deletion", zonebus.DeleteDumpsQueue(zone), bus.OnlyFrom(bus.Is(bus.PrincipalDatabases), busapi.DeleteDumps(dbs)))
}

// databaseHelper serves the root helper on a socket in a folder of root's (0711: the host
// reaches the socket, lists nothing) for as long as the agent runs.
func databaseHelper(p *service.Process, cfg config.Config, host *databaseHost) (*dbhelper.Server, error) {
	steps, err := helperSteps(cfg, p.Log)
	if err != nil {
		return nil, err
	}
	if steps.ClientCaps != nil {
		caps := steps.ClientCaps
		p.OnClose(func() { _ = caps.Remove() }) // the pooler goes with the agent
	}
	dir, err := os.MkdirTemp("", "tori-dbhelper-")
	if err != nil {
		return nil, err
	}
	p.OnClose(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	host.socket = filepath.Join(dir, "helper.sock")
	ln, err := dbhelper.Listen(host.socket)
	if err != nil {
		return nil, err
	}
	server := &dbhelper.Server{UID: host.uid, Steps: steps, Log: p.Log.With("component", "database helper")}
	p.Go("database helper", func(ctx context.Context) error { return server.Serve(ctx, ln) })
	return server, nil
}

// helperSteps are the helper's steps for this zone: its ceilings (root and e2fsprogs), the
// cluster's pg_hba.conf as its superuser, and the pooler's caps (root and nft).
func helperSteps(cfg config.Config, log *slog.Logger) (*dbhelper.Steps, error) {
	admin, err := url.Parse(cfg.PostgresAdminURL)
	if err != nil {
		return nil, err
	}
	steps := &dbhelper.Steps{Access: managed.HBAKeeper{SuperURL: cfg.Tablespaces()}, TablespaceOwner: admin.User.Username()}
	if c := databaseCeilings(cfg, log); c != nil {
		steps.Ceilings = c
	}
	caps, err := poolerClientCaps(cfg, log)
	if err != nil {
		return nil, err
	}
	steps.ClientCaps = caps
	return steps, nil
}

// databaseHost is the host's process as the agent runs it.
type databaseHost struct {
	cfg    config.Config
	who    runas.User // ZONE_DATABASES_USER, or the agent's own when it is not root
	uid    uint32
	gid    uint32
	dir    string   // its folder (ZONE_DATABASES_DIR, absolute)
	env    []string // its environment
	socket string   // the helper's
	logs   io.Writer
	log    *slog.Logger
}

// ready is nil once the host's /readyz says it is.
func (h *databaseHost) ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.cfg.DatabasesHealthAddr+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the database host is not ready: %s", strings.TrimSpace(string(body)))
	}
	return nil
}

// run starts the host, admits it at the helper and keeps it until ctx ends; a host that
// stops on its own stops the agent, naming it (as its pooler did when it ran in the agent).
func (h *databaseHost) run(ctx context.Context, helper *dbhelper.Server) error {
	// The parent-death signal follows the thread that forked the host, not the process: a
	// thread the Go runtime lets end (one a goroutine left locked, as namespace work does)
	// would kill it. This goroutine keeps its thread until the host has exited.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd, err := h.command()
	if err != nil {
		return err
	}
	err = cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the host's copy is its own
	}
	if err != nil {
		return fmt.Errorf("start the database host: %w", err)
	}
	helper.Admit(cmd.Process.Pid)
	defer helper.Admit(0)
	h.log.InfoContext(ctx, "database host started", "pid", cmd.Process.Pid, "uid", h.uid, "health", h.cfg.DatabasesHealthAddr)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return fmt.Errorf("the database host exited: %v", err)
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(h.cfg.ShutdownTimeout + 5*time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return nil
}
