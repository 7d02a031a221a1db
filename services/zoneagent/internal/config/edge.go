package config

import (
	"errors"
	"fmt"
	"net"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/profiling"
)

// Edge is the edge's settings that the runtime reads too: where the edge listens, who it
// runs as, its certificates and its site cache (docs/edge-process.md).
type Edge struct {
	// EdgeAddr is where the edge serves live apps.
	EdgeAddr string `env:"EDGE_ADDR, default=127.0.0.1:8081"`
	// EdgeMaxConnsPerIP bounds concurrent edge connections from one client address; past it
	// a connection is answered 429 and closed.
	EdgeMaxConnsPerIP int `env:"EDGE_MAX_CONNS_PER_IP, default=256"`
	// EdgeUser is the unprivileged user the zone agent runs its edge process as (made by
	// scripts/ensure-services.sh); an agent that is not root runs it as itself.
	EdgeUser string `env:"ZONE_EDGE_USER, default=tori-edge"`
	// EdgeHealthAddr is where the edge process answers /healthz, /readyz and /metrics; unset:
	// a free loopback port the agent picks and hands the edge (make run sets 127.0.0.1:8108),
	// so agents started side by side (tests, a second zone) never meet on one port.
	EdgeHealthAddr string `env:"ZONE_EDGE_HEALTH_ADDR"`
	EdgeTLS
	EdgeCache
	Previews
	EdgeMetrics
}

func (e *Edge) validate() error {
	var errs []error
	for name, v := range map[string]string{"EDGE_ADDR": e.EdgeAddr, "ZONE_EDGE_HEALTH_ADDR": e.EdgeHealthAddr} {
		if _, _, err := net.SplitHostPort(v); err != nil && (v != "" || name == "EDGE_ADDR") {
			errs = append(errs, fmt.Errorf("%s %q is not host:port", name, v))
		}
	}
	if e.EdgeMaxConnsPerIP < 1 {
		errs = append(errs, errors.New("EDGE_MAX_CONNS_PER_IP must be at least 1"))
	}
	if e.EdgeUser == "" {
		errs = append(errs, errors.New("ZONE_EDGE_USER must not be empty"))
	}
	if err := e.EdgeTLS.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := e.EdgeCache.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := e.EdgeMetrics.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// EdgeProcess is the whole configuration of the zone's edge process (`zoneagent edge`,
// started by the agent with only these settings in its environment): no broker, no
// sandbox, no managed databases.
type EdgeProcess struct {
	// Zone is the zone's id (its certificate events name it).
	Zone string `env:"ZONE_ID, default=local"`
	// AppsDomain: an app is served at <slug>.<AppsDomain>.
	AppsDomain string `env:"APPS_DOMAIN, default=apps.localhost"`
	// DataDir is the zone's folder; the edge reaches only the parts handed to it (tls/,
	// its site cache), never the rest.
	DataDir string `env:"DATA_DIR, default=./var"`
	// DatabaseURL is the zone agent's Postgres role: the edge keeps certificates there and
	// writes certificate states and app log lines to the outbox the agent relays.
	DatabaseURL string `env:"ZONEAGENT_DATABASE_URL"`
	// ShutdownTimeout bounds how long requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"ZONEAGENT_SHUTDOWN_TIMEOUT, default=10s"`
	// Profiles for profiling the edge under load (PROFILE_ADDR, loopback only); off by
	// default. The agent itself serves none: the edge is what is profiled.
	Profiling profiling.Config
	Edge
	ZoneObjectStore
}

// BusConfig is none: the edge process does not use the broker.
func (c *EdgeProcess) BusConfig() bus.Config { return bus.Config{} }

// Validate checks the configuration.
func (c *EdgeProcess) Validate() error {
	var errs []error
	if c.AppsDomain == "" || c.DataDir == "" || c.DatabaseURL == "" {
		errs = append(errs, errors.New("APPS_DOMAIN, DATA_DIR and ZONEAGENT_DATABASE_URL must not be empty"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("ZONEAGENT_SHUTDOWN_TIMEOUT must be positive"))
	}
	if err := c.Edge.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Previews.validate(c.AppsDomain); err != nil {
		errs = append(errs, err)
	}
	if err := c.ZoneObjectStore.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Profiling.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
