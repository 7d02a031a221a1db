package main

import (
	"context"
	"fmt"
	"io"
	"os"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/busapi"
	"tori.dev/services/billing/internal/config"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

// run picks the command: the service, or an operator command.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return serve(ctx, nil, os.Stderr)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, nil, os.Stderr)
	case "set-plan":
		return setPlan(ctx, pkgconfig.Environ(), args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

const usage = `usage:
  billing [serve]                                   run the service
  billing set-plan -account <id|email> -plan <nestling|songbird|flock> [-timeout 30s]
                                                    move an account to a plan (operators only)
`

// serve is the composition root: it runs the service until ctx ends, then stops taking
// requests, lets in-flight ones finish within the shutdown timeout, and stops the bus work.
func serve(ctx context.Context, env map[string]string, logs io.Writer) error {
	spec := service.Spec[*config.Config]{Name: "billing", Version: version, Env: env, Logs: logs}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.Config) error {
		if err := p.OpenServiceDatabase(ctx, cfg.DatabaseURL, store.Service("").Schema, store.Migrations); err != nil {
			return err
		}

		svc := usecase.New(store.New(p.Pool), paymentOptions(cfg.Stripe)...)
		if err := p.DialBus(ctx); err != nil {
			return err
		}
		api := httpapi.New(httpapi.Deps{Billing: svc, SigningKey: []byte(cfg.SigningKey), DB: p.Pool, Health: p.Health, Log: p.Log})
		p.Consume(busapi.AccountsSubscription(svc, store.Bind), busapi.TeamsSubscription(svc, store.Bind))
		if err := p.ServeHTTP(api, cfg.Addr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		p.RelayOutbox()
		p.Respond("account plan responder", billingbus.QueueAccountPlan, busapi.AccountPlanResponder(svc))
		if svc.Configured() {
			// Holds follow the clock: the notices (mails) of day 0 and before days 7 and 14.
			p.Every(lifecycle.Job{Name: "hold notices", Every: cfg.HoldNoticeEvery, Immediately: true, Run: svc.SendHoldNotices})
			// VAT IDs judged by their format while VIES was down are asked about again.
			p.Every(lifecycle.Job{Name: "recheck VAT IDs", Every: cfg.VATRecheckEvery, Run: svc.RecheckVATIDs})
			// The provider charges what the VAT rules say for each customer now.
			p.Every(lifecycle.Job{Name: "apply VAT terms", Every: cfg.VATTermsEvery, Immediately: true, Run: svc.ApplyVATTerms})
		}
		return nil
	})
}
