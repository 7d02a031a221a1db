package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/dbhelper"
	"tori.dev/services/zoneagent/internal/managed"
	"tori.dev/services/zoneagent/internal/runas"
	"tori.dev/services/zoneagent/internal/store"
)

// databasesArg is the mode the agent starts its database host in (dbhost.go).
const databasesArg = "databases"

// runDatabaseHost runs this process as the database host and exits, when the agent started
// it so; it returns otherwise.
func runDatabaseHost() {
	if len(os.Args) < 2 || os.Args[1] != databasesArg {
		return
	}
	if err := dieWithAgent(); err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent databases:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serveDatabaseHost(ctx, nil, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent databases:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// dieWithAgent asks to be killed when the agent dies (setpriv's change of user dropped what
// the agent asked for at the fork), at once and with its pooler (killed with it), so an agent
// started again finds the pooler's port free, as when the pooler was the agent's own child;
// then it checks the agent has not died already. And it keeps
// anything this process runs from gaining privileges (setpriv did too; not when the agent
// is not root).
func dieWithAgent() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	parent, err := strconv.Atoi(os.Getenv(hostParentEnv))
	if err != nil {
		return runas.ErrOrphan
	}
	if err := runas.DieWithParent(parent); err != nil {
		return err
	}
	_ = syscall.Close(hostExeFD) // the binary it was started from; nothing else needs it
	return nil
}

// serveDatabaseHost is the database host's composition root: the databases' bus consumer
// and responders, the pooler, the size checks, the ceilings' watch, the statement watchdog
// and the client caps, over the root helper's steps.
func serveDatabaseHost(ctx context.Context, env map[string]string, logs io.Writer) error {
	zone := func(cfg *config.DatabaseHost) []any { return []any{"zone", cfg.Zone} }
	spec := service.Spec[*config.DatabaseHost]{Name: "zoneagent-databases", Version: version, Env: env, Logs: logs, LogWith: zone}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, hc *config.DatabaseHost) error {
		managed.StartDumpMetrics()
		cfg := hc.AsZone()
		// The agent has migrated the schema before starting the host: this is a no-op.
		if err := p.OpenPostgres(ctx, cfg.DatabaseURL, store.Service(cfg.Zone, "").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations)); err != nil {
			return err
		}
		st, log := store.New(p.Pool), p.Log
		helper := dbhelper.Client{Socket: os.Getenv(helperSocketEnv)}
		ceilings, clientCaps, err := firstPing(ctx, helper)
		if err != nil {
			return fmt.Errorf("the database helper: %w", err)
		}
		p.Health.Check("helper", func(ctx context.Context) error { _, _, err := helper.Ping(ctx); return err })
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		// The host provisions as a role that is not the cluster's superuser; the superuser's
		// steps are the helper's.
		cluster := managed.Cluster{AdminURL: cfg.PostgresAdminURL}
		if err := cluster.RefuseSuperuser(ctx); err != nil {
			return err
		}
		p.Health.Check("cluster", cluster.Ping)
		dbs, pool, err := managedDatabases(cfg, st, helper, ceilings, log)
		if err != nil {
			return err
		}
		poolerUp := p.Health.Await("pooler")
		health := httpserver.New(httpserver.Options{Name: "zoneagent-databases", Log: log, WriteTimeout: 10 * time.Second,
			Observe: httpserver.MetricsOnly, Health: &p.Health, Ready: p.Health.ReadyHandler})
		serveDatabaseBus(p, cfg.Zone, dbs)
		if cfg.DatabasesHealthAddr == "" {
			return errHealthAddrUnset
		}
		if err := p.ServeHTTP(health, cfg.DatabasesHealthAddr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.Go("pooler", pool.Run)
		// A pooler that does not come up stops the host, and with it the zone, naming it; a
		// database command taken before it answers fails and is retried by the bus.
		p.Go("pooler start", func(ctx context.Context) error {
			if err := awaitPooler(ctx, pool); err != nil {
				return err
			}
			poolerUp()
			<-ctx.Done()
			return nil
		})
		p.Every(lifecycle.Job{Name: "database sizes", Every: cfg.SizeCheckInterval, Run: dbs.CheckSizes})
		p.Every(statementWatchdog(cfg))
		if job, ok := ceilingWatch(cfg, dbs, pool, helper); ok {
			p.Every(job)
		}
		if clientCaps {
			p.Every(clientCapsJob(st, pool, helper))
		} else {
			log.Error("the pooler has no per-app connection caps: they need root and nft (ZONE_NFT)")
		}
		p.Listening("pooler", cfg.Pooler(), "health", cfg.DatabasesHealthAddr, "uid", os.Getuid(), "ceilings", ceilings)
		return nil
	})
}

// firstPing asks the helper what it can do, again for a few seconds: the agent admits this
// process's pid only once it has started it, which a fast start may precede.
func firstPing(ctx context.Context, helper dbhelper.Client) (ceilings, clientCaps bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if ceilings, clientCaps, err = helper.Ping(ctx); err == nil {
			return ceilings, clientCaps, nil
		}
		select {
		case <-ctx.Done():
			return false, false, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
