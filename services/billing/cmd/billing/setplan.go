package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/config"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

// setPlan is the operator command `billing set-plan`. It writes the plan and its outbox event
// in one transaction, exactly as the service would, then runs a relay until the event is
// published, so it works whether or not a billing service is running. It is safe to repeat:
// a repeat changes nothing and still publishes anything left unpublished.
func setPlan(ctx context.Context, env map[string]string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("set-plan", flag.ContinueOnError)
	fs.SetOutput(stdout)
	account := fs.String("account", "", "the account: its id or its email address")
	plan := fs.String("plan", "", "nestling, songbird or flock")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (waiting for the account to reach billing, then for the event to be published)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("set-plan: unexpected argument %q", fs.Arg(0))
	}
	ref, err := accounts.ParseRef(*account)
	if err != nil {
		return fmt.Errorf("set-plan: -account %q: give an account id or an email address", *account)
	}
	if _, err := catalog.Lookup(*plan); err != nil {
		return fmt.Errorf("set-plan: -plan %q: want nestling, songbird or flock", *plan)
	}

	var cfg config.Infra
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	log := logging.New("billing", nil)

	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, store.Service("").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations))
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	svc := usecase.New(st)

	a, changed, err := svc.SetPlanWhenRecorded(ctx, ref, *plan)
	if err != nil {
		return fmt.Errorf("set-plan: %w", err)
	}
	if changed {
		fmt.Fprintf(stdout, "account %s (%s) is now on %s (version %d)\n", a.ID, a.Email, a.Plan, a.Version)
	} else {
		fmt.Fprintf(stdout, "account %s (%s) is already on %s (version %d)\n", a.ID, a.Email, a.Plan, a.Version)
	}

	conn, err := bus.Dial(ctx, cfg.BusConfig(), log)
	if err != nil {
		return fmt.Errorf("set-plan: the plan is saved, its event waits in the outbox for billing's relay: %w", err)
	}
	defer conn.Close()
	if err := busapi.FlushOutbox(ctx, conn, pool, st, log); err != nil {
		return fmt.Errorf("set-plan: the plan is saved, its event waits in the outbox for billing's relay: %w", err)
	}
	fmt.Fprintln(stdout, "event published")
	return nil
}
