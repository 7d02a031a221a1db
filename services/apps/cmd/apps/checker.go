package main

import (
	"log/slog"
	"time"

	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/store"
	"tori.dev/services/apps/internal/usecase"
)

// hostnameChecker checks the custom hostnames' DNS on the schedule cfg sets: pending ones
// often until they expire, active and missing ones less often, with a grace before a
// missing one is taken down.
func hostnameChecker(cfg config.Config, st *store.Store, log *slog.Logger) *usecase.HostnameChecker {
	return &usecase.HostnameChecker{
		Store: st, Resolver: newResolver(cfg.DNSResolver), Interval: cfg.DomainCheckInterval,
		Policy: domains.Policy{
			PendingTTL: cfg.DomainPendingTTL, PendingEvery: cfg.DomainCheckInterval, ActiveEvery: cfg.DomainRecheckInterval,
			MissingEvery: cfg.DomainMissingCheckInterval, Grace: cfg.DomainMissingGrace,
		},
		Log: log, Now: time.Now, Batch: 100, Parallel: cfg.DomainCheckParallel, LookupTimeout: cfg.DomainLookupTimeout,
	}
}
