// Package config is the zone agent's configuration, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/profiling"
)

// Config is the zone agent's configuration.
type Config struct {
	// Addr serves only /healthz; the agent takes no commands over HTTP.
	Addr string `env:"ZONEAGENT_ADDR, default=127.0.0.1:8107"`
	// Zone is this zone's id; it names the zone's queues and must match apps' `zone` field.
	Zone string `env:"ZONE_ID, default=local"`
	// AppsDomain: an app is served at <slug>.<AppsDomain>.
	AppsDomain string `env:"APPS_DOMAIN, default=apps.localhost"`
	// ConsoleURL is the web console's address (the same setting as identity's and the
	// console's): the zone refuses to start when it lies under AppsDomain.
	ConsoleURL string `env:"CONSOLE_URL, default=http://127.0.0.1:5173"`
	// DataDir holds the zone's local state (apps/ source trees, tls/, the edge's cache).
	// Artifacts, sites and dumps are never in a folder: they live in the object store.
	DataDir string `env:"DATA_DIR, default=./var"`
	// AppsDir holds source trees of running services; see the README for its default.
	AppsDir string `env:"ZONE_APPS_DIR"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"ZONEAGENT_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"ZONEAGENT_AMQP_URL"`
	// AgentProfileAddr serves the agent's own Go profiles on a loopback address (off by
	// default; the edge process's are PROFILE_ADDR): make bench-scale reads what a napping app
	// costs the agent after asking it to return its garbage to the OS.
	AgentProfileAddr string `env:"ZONE_AGENT_PROFILE_ADDR"`
	// ImageRuntime names the docker-compatible CLI (docker, podman or a path) image deploys
	// run through; empty means none, and image deploys fail with image_runtime_unavailable.
	ImageRuntime string `env:"ZONE_IMAGE_RUNTIME"`
	// TestRegistryHost and TestRegistryCA are for tests only (no registry runs where they
	// run): a registry name, ending in .test (which DNS never resolves), that the zone's
	// pull resolves to 127.0.0.1 and lets past its deny list, and the PEM file of that
	// registry's certificate. Every other name gets the deny list in full.
	TestRegistryHost string `env:"ZONE_TEST_REGISTRY_HOST"`
	TestRegistryCA   string `env:"ZONE_TEST_REGISTRY_CA"`
	// The sandbox (README "The sandbox"): its tools, the apps' uid range, and each app's
	// limits.
	Bwrap       string `env:"ZONE_BWRAP, default=bwrap"`
	Pasta       string `env:"ZONE_PASTA, default=pasta"`
	Nft         string `env:"ZONE_NFT, default=nft"`
	CgroupMount string `env:"ZONE_CGROUP_MOUNT, default=/sys/fs/cgroup"`
	UIDBase     uint32 `env:"ZONE_APP_UID_BASE, default=200000"`
	UIDCount    uint32 `env:"ZONE_APP_UID_COUNT, default=100000"`
	// Resource limits of each app (its processes together), and of each process's files.
	MemoryBytes       int64 `env:"ZONE_PROCESS_MEMORY_BYTES, default=536870912"`
	MaxProcesses      int64 `env:"ZONE_PROCESS_MAX_PROCS, default=256"`
	MaxOpenFiles      int64 `env:"ZONE_PROCESS_MAX_FILES, default=1024"`
	DiskBytes         int64 `env:"ZONE_APP_DISK_BYTES, default=1073741824"`
	LogLinesPerSecond int   `env:"ZONE_APP_LOG_LINES_PER_SECOND, default=500"`
	// PoolerPort is the one host loopback port an app reaches (its database pooler); 0: none.
	PoolerPort int `env:"ZONE_POOLER_PORT, default=6432"`
	// GoRoot is the Go toolchain builds use, shown read-only in every sandbox (README
	// "Builds without a manifest"); unset: the one of the go on the agent's PATH; "none":
	// no Go for builds.
	GoRoot string `env:"ZONE_GO_ROOT"`
	// SandboxResolvers are the upstreams (IP or IP:port, 53 by default) of the zone's DNS
	// relay, the one resolver apps ask; none: the host's /etc/resolv.conf nameservers.
	SandboxResolvers []string `env:"ZONE_SANDBOX_RESOLVERS"`
	// IdleAfter: a service on a minScale-0 plan naps after this long without a request.
	IdleAfter time.Duration `env:"ZONE_IDLE_AFTER, default=15m"`
	// ShutdownTimeout bounds how long requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"ZONEAGENT_SHUTDOWN_TIMEOUT, default=10s"`

	bus.Config
	ManagedDatabases
	Edge
	ZoneObjectStore
	RuntimeMetrics
}

var zoneRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// Validate checks the configuration.
// AgentProfiling is the agent's own profile server (ZONE_AGENT_PROFILE_ADDR).
func (c *Config) AgentProfiling() profiling.Config {
	return profiling.Config{ProfileAddr: c.AgentProfileAddr}
}

func (c *Config) Validate() error {
	var errs []error
	for name, v := range map[string]string{"ZONEAGENT_ADDR": c.Addr} {
		if _, _, err := net.SplitHostPort(v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not host:port", name, v))
		}
	}
	if err := c.AgentProfiling().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("ZONE_AGENT_PROFILE_ADDR: %w", err))
	}
	// A zone named like a group of zones' events (zone.deploy.*, zone.logs.*, zone.app.*,
	// zone.database.*, zone.cron.*) would have its commands heard by whoever follows those events.
	switch {
	case !zoneRe.MatchString(c.Zone), c.Zone == "deploy", c.Zone == "logs", c.Zone == "app", c.Zone == "database", c.Zone == "cron":
		errs = append(errs, fmt.Errorf("ZONE_ID %q must be a lower-case name (and not deploy, logs, app, database or cron)", c.Zone))
	}
	if c.AppsDomain == "" || c.DataDir == "" {
		errs = append(errs, errors.New("APPS_DOMAIN and DATA_DIR must not be empty"))
	}
	if consoleUnderAppsDomain(c.ConsoleURL, c.AppsDomain) {
		errs = append(errs, errors.New("CONSOLE_URL must not be APPS_DOMAIN or under it: every app could set the console's cookies; give the console a host of its own"))
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("ZONEAGENT_DATABASE_URL must be a postgres:// URL (bin/bootstrap writes it to DATA_DIR/secrets/zoneagent.env)"))
	}
	if c.MemoryBytes <= 0 || c.MaxProcesses <= 0 || c.MaxOpenFiles <= 0 || c.IdleAfter <= 0 || c.ShutdownTimeout <= 0 || c.LogLinesPerSecond <= 0 {
		errs = append(errs, errors.New("process limits, ZONE_APP_LOG_LINES_PER_SECOND, ZONE_IDLE_AFTER and ZONEAGENT_SHUTDOWN_TIMEOUT must be positive"))
	}
	if c.DiskBytes < 16<<20 {
		errs = append(errs, errors.New("ZONE_APP_DISK_BYTES must be at least 16 MiB"))
	}
	if c.UIDBase < 1000 || c.UIDCount < 2 || uint64(c.UIDBase)+uint64(c.UIDCount) > 1<<32-2 {
		errs = append(errs, errors.New("ZONE_APP_UID_BASE must be at least 1000 and ZONE_APP_UID_COUNT at least 2, within 32 bits"))
	}
	if c.PoolerPort < 0 || c.PoolerPort > 65535 {
		errs = append(errs, errors.New("ZONE_POOLER_PORT must be a port or 0"))
	}
	if _, err := resolverAddrs(c.SandboxResolvers); err != nil {
		errs = append(errs, fmt.Errorf("ZONE_SANDBOX_RESOLVERS: %w", err))
	}
	if c.TestRegistryHost != "" && (!strings.HasSuffix(c.TestRegistryHost, ".test") || c.TestRegistryCA == "") {
		errs = append(errs, errors.New("ZONE_TEST_REGISTRY_HOST must end in .test and come with ZONE_TEST_REGISTRY_CA (tests only)"))
	}
	if err := c.Edge.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Previews.validate(c.AppsDomain); err != nil {
		errs = append(errs, err)
	} else if consoleUnderAppsDomain(c.ConsoleURL, c.PreviewsDomainFor(c.AppsDomain)) {
		errs = append(errs, errors.New("CONSOLE_URL must not be PREVIEWS_DOMAIN or under it: every preview could set the console's cookies"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateDatabases(); err != nil {
		errs = append(errs, err)
	}
	if err := c.ZoneObjectStore.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.RuntimeMetrics.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the service's own broker user.
func (c *Config) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }

// SandboxResolverAddrs are ZONE_SANDBOX_RESOLVERS as IP:port (Validate has checked them).
func (c Config) SandboxResolverAddrs() []string {
	addrs, _ := resolverAddrs(c.SandboxResolvers)
	return addrs
}

// resolverAddrs parses resolver addresses: an IP, or IP:port; port 53 when none.
func resolverAddrs(list []string) ([]string, error) {
	var out []string
	for _, a := range list {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if ap, err := netip.ParseAddrPort(a); err == nil && ap.Port() != 0 && ap.Addr().Zone() == "" {
			out = append(out, ap.String())
			continue
		}
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address or IP:port", a)
		}
		out = append(out, netip.AddrPortFrom(ip, 53).String())
	}
	return out, nil
}
