package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/buildinfo"
	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/apps/internal/busapi"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/httpapi"
	"tori.dev/services/apps/internal/store"
	"tori.dev/services/apps/internal/usecase"
)

// version is what scripts/build.sh stamps into pkg/buildinfo (scripts/ldflags.sh).
var version = buildinfo.Version

// planTimeout bounds one question to billing, so a create never waits the bus's whole
// request timeout before answering 503.
const planTimeout = 3 * time.Second

// run serves, or runs the one subcommand, with the process's own environment.
func run(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return serve(ctx, nil, os.Stderr)
	case len(args) == 1 && args[0] == "rotate-keys":
		return rotateKeys(ctx, pkgconfig.Environ(), os.Stdout)
	}
	return fmt.Errorf("usage: apps [rotate-keys]")
}

// serve is the composition root: it runs HTTP, the outbox relay, the consumers, the env
// responders, the hostname checker and the bus housekeeping until ctx ends. A silently dead
// consumer would leave slugs held and plans stale, so any part stopping early stops the
// service.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "apps", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations); err != nil {
			return err
		}
		st, log := store.New(p.Pool), p.Log
		kr, err := openKeyring(ctx, *cfg, st)
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "keyring ready", "keyring", kr.String())
		if err := p.DialBus(ctx); err != nil {
			return err
		}

		svc := usecase.New(usecase.Deps{
			Store: st, Keyring: kr, Plans: busapi.Plans{Client: billingbus.PlanClient{Bus: p.Bus, Timeout: planTimeout}},
			Hosting: busapi.Hosting{Bus: p.Bus},
			Zones:   cfg.Zones(), Cleanup: cfg.Cleanup(), AppsDomain: cfg.AppsDomain,
		})
		// One gate for every route: refusals and changes go to the team's audit log through
		// this service's outbox.
		gate := accessgate.New(svc.Apps.TeamOf, accessgate.Publisher("apps"), p.Pool, log)
		web := httpapi.New(httpapi.Deps{
			Apps: svc.Apps, Env: svc.Env, Domains: svc.Domains, Gate: gate, AppsDomain: cfg.AppsDomain,
			SigningKey: []byte(cfg.SigningKey), Health: p.Health, Log: log,
		})
		checker := hostnameChecker(*cfg, st, log)

		for _, sub := range (busapi.Consumers{Tx: store.Bind, Log: log, CleanupFrom: cfg.Cleanup()}).Subscriptions() {
			p.Consume(sub)
		}
		// DATABASE_URL follows the app's managed database; its credentials come from the zone.
		p.Consume(busapi.DatabaseConsumer{
			Tx: store.Bind, URLs: usecase.DatabaseURLs{Keyring: kr, Now: time.Now, Log: log}, Bus: p.Bus,
		}.Subscription())
		if err := p.ServeHTTP(web, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		// Snapshots are taken and compared only for the deploys service, and opened only for a
		// zone (which must also host the deploy).
		fromDeploys := bus.Is(bus.PrincipalDeploys)
		p.Respond("env snapshot responder", appsbus.QueueEnvSnapshot, bus.OnlyFrom(fromDeploys, busapi.EnvSnapshot(svc.Env)))
		p.Respond("env same responder", appsbus.QueueEnvSame, bus.OnlyFrom(fromDeploys, busapi.EnvSame(svc.Env)))
		p.Respond("env open responder", appsbus.QueueEnvOpen, bus.OnlyFrom(bus.IsZone, busapi.EnvOpen(svc.Env)))
		p.Respond("app lookup responder", appsbus.QueueAppLookup, busapi.AppLookup(svc.Apps))
		p.Every(lifecycle.Job{
			Name: "check custom hostnames", Every: cfg.DomainCheckInterval, Immediately: true, Run: checker.CheckOnce,
		})
		return nil
	})
}
