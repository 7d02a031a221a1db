// Package service starts and stops one service process the one way every Tori service does:
// its config loaded from the environment and validated, its logger and traces, its Postgres
// pool migrated in its own schema, its bus connection, /readyz following both, its HTTP
// server, consumers and periodic jobs run as one lifecycle group, and everything released in
// the reverse order on the way out. A service's run.go keeps only what is its own: the use
// cases it builds and the parts it adds.
package service

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/telemetry"
)

// flushTimeout bounds sending the last traces on the way out.
const flushTimeout = 5 * time.Second

// Config is what Run asks of a service's config struct (through a pointer to it): where its
// broker is. Loading fills the struct from the environment and validates it (pkg/config).
type Config[C any] interface {
	*C
	BusConfig() bus.Config
}

// Spec names the process and where its settings and logs go; PC is the pointer to the
// service's config struct.
type Spec[PC any] struct {
	Name, Version string
	// Env is the environment the config is read from; nil is the process's own.
	Env map[string]string
	// Logs takes the JSON log lines (stderr in production, a buffer in tests).
	Logs io.Writer
	// LogWith, when set, adds attributes read from the loaded config to every log line
	// (the zone agent's zone).
	LogWith func(cfg PC) []any
}

// Process is one running service: what Run opened, and the parts it will run.
type Process struct {
	Name   string
	Log    *slog.Logger
	Health health.Identity
	// Bus is set by DialBus, Pool by OpenPostgres (or OpenServiceDatabase).
	Bus  *bus.Conn
	Pool *pgxpool.Pool

	busConfig bus.Config
	closers   []func()
	parts     []part
	addrs     []any // what Run logs as "listening"
}

// Run is a service's life: it loads the config, makes the logger and the tracer, then lets
// build open its connections (OpenServiceDatabase, DialBus, its own) and add the parts, and runs
// them until ctx ends or one fails or stops (see Process.Go). It returns nil after a clean
// stop and the first failure otherwise; either way everything opened is closed, the last
// first.
func Run[C any, PC Config[C]](ctx context.Context, spec Spec[PC], build func(ctx context.Context, p *Process, cfg PC) error) error {
	cfg := PC(new(C))
	if spec.Env == nil {
		spec.Env = pkgconfig.Environ()
	}
	if err := pkgconfig.LoadMap(ctx, cfg, spec.Env); err != nil {
		return err
	}
	log := logging.New(spec.Name, spec.Logs)
	if spec.LogWith != nil {
		log = log.With(spec.LogWith(cfg)...)
	}
	log.InfoContext(ctx, "starting", "version", spec.Version, "config", pkgconfig.Describe(cfg))
	stopTracing, err := telemetry.Setup(ctx, spec.Name, spec.Version)
	if err != nil {
		return err
	}
	p := &Process{Name: spec.Name, Log: log, Health: health.NewIdentity(spec.Name, spec.Version)}
	defer p.close()
	p.OnClose(func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		_ = stopTracing(fctx)
	})
	p.busConfig = cfg.BusConfig()
	if err := build(ctx, p, cfg); err != nil {
		return err
	}
	return p.run(ctx)
}

// close releases what the process opened, the last first.
func (p *Process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// OnClose adds f to what is released when the process ends, before what was opened earlier.
func (p *Process) OnClose(f func()) { p.closers = append(p.closers, f) }

// OpenPostgres connects to url as the service's role, migrated in schema, and makes /readyz
// follow the database: 503 while it is lost, ready again once it returns.
func (p *Process) OpenPostgres(ctx context.Context, url, schema string, opts ...pgstore.Option) error {
	pool, err := pgstore.Connect(ctx, url, schema, opts...)
	if err != nil {
		return err
	}
	p.Pool = pool
	p.OnClose(pool.Close)
	p.Health.Check("database", pool.Ping)
	return nil
}

// OpenServiceDatabase is OpenPostgres for a service behind the gateway with an outbox: its
// own migrations after the bus's, and the signed-request nonces shared with its other
// replicas, so a signed state-changing request is served once across them (pkg/callerid).
// opts tune the pool further (its size, its sessions' settings).
func (p *Process) OpenServiceDatabase(ctx context.Context, url, schema string, migrations pgstore.MigrationSet, opts ...pgstore.Option) error {
	opts = append([]pgstore.Option{pgstore.WithMigrations(bus.Migrations, migrations, callerid.Migrations)}, opts...)
	if err := p.OpenPostgres(ctx, url, schema, opts...); err != nil {
		return err
	}
	p.OnClose(callerid.ShareReplays(callerid.NewSharedNonces(p.Pool)))
	return nil
}

// DialBus connects to the broker the config's BusConfig names, and makes /readyz follow it
// as it does the database. A service dials it where it first needs it: after what must
// refuse the start on its own (the apps service's keyring), whether or not the broker is up.
func (p *Process) DialBus(ctx context.Context) error {
	conn, err := bus.Dial(ctx, p.busConfig, p.Log)
	if err != nil {
		return err
	}
	p.Bus = conn
	p.OnClose(func() { _ = conn.Close() })
	p.Health.Check("broker", conn.Ready)
	return nil
}
