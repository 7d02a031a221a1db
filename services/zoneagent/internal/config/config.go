// Package config is the zone agent's configuration, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"time"

	"tori.dev/pkg/bus"
)

// Config is the zone agent's configuration.
type Config struct {
	// Addr serves only /healthz; the agent takes no commands over HTTP.
	Addr string `env:"ZONEAGENT_ADDR, default=127.0.0.1:8107"`
	// EdgeAddr is where the edge serves live apps.
	EdgeAddr string `env:"EDGE_ADDR, default=127.0.0.1:8081"`
	// Zone is this zone's id; it names the zone's queues and must match apps' `zone` field.
	Zone string `env:"ZONE_ID, default=local"`
	// AppsDomain: an app is served at <slug>.<AppsDomain>.
	AppsDomain string `env:"APPS_DOMAIN, default=apps.localhost"`
	// DataDir holds sites/ and apps/ (unpacked revisions); ObjectsDir is the object store
	// the deploys service writes artifacts to (DATA_DIR/objects by default).
	DataDir    string `env:"DATA_DIR, default=./var"`
	ObjectsDir string `env:"ZONE_OBJECTS_DIR"`
	// AppsDir holds source trees of running services; see the README for its default.
	AppsDir string `env:"ZONE_APPS_DIR"`
	// DatabaseURL is an admin URL; the agent keeps its records in schema zoneagent_<zone>.
	DatabaseURL string `env:"DATABASE_URL, default=postgres://postgres@127.0.0.1:5432/tori?sslmode=disable"`
	DBPassword  string `env:"ZONEAGENT_DB_PASSWORD" secret:"true"`
	// ImageRuntime names the docker-compatible CLI (docker, podman or a path) image deploys
	// run through; empty means none, and image deploys fail with image_runtime_unavailable.
	ImageRuntime string `env:"ZONE_IMAGE_RUNTIME"`
	// RunAsUser, when set and the agent runs as root, is the unprivileged user customer
	// processes run as.
	RunAsUser string `env:"ZONE_RUN_AS_USER"`
	// Resource limits of customer processes.
	MemoryBytes  int64 `env:"ZONE_PROCESS_MEMORY_BYTES, default=536870912"`
	MaxProcesses int64 `env:"ZONE_PROCESS_MAX_PROCS, default=256"`
	MaxOpenFiles int64 `env:"ZONE_PROCESS_MAX_FILES, default=1024"`
	// IdleAfter: a service on a minScale-0 plan naps after this long without a request.
	IdleAfter time.Duration `env:"ZONE_IDLE_AFTER, default=15m"`
	// ShutdownTimeout bounds how long requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"ZONEAGENT_SHUTDOWN_TIMEOUT, default=10s"`

	bus.Config
}

var zoneRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// Objects is the object store's root.
func (c *Config) Objects() string {
	if c.ObjectsDir != "" {
		return c.ObjectsDir
	}
	return filepath.Join(c.DataDir, "objects")
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	for name, v := range map[string]string{"ZONEAGENT_ADDR": c.Addr, "EDGE_ADDR": c.EdgeAddr} {
		if _, _, err := net.SplitHostPort(v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not host:port", name, v))
		}
	}
	// "deploy" and "logs" would collide with the zone's own routing keys (zone.deploy.*,
	// zone.logs.*).
	if !zoneRe.MatchString(c.Zone) || c.Zone == "deploy" || c.Zone == "logs" || c.Zone == "app" {
		errs = append(errs, fmt.Errorf("ZONE_ID %q must be a lower-case name (and not deploy, logs or app)", c.Zone))
	}
	if c.AppsDomain == "" || c.DataDir == "" {
		errs = append(errs, errors.New("APPS_DOMAIN and DATA_DIR must not be empty"))
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("DATABASE_URL must be a postgres:// URL"))
	}
	if c.MemoryBytes <= 0 || c.MaxProcesses <= 0 || c.MaxOpenFiles <= 0 || c.IdleAfter <= 0 || c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("process limits, ZONE_IDLE_AFTER and ZONEAGENT_SHUTDOWN_TIMEOUT must be positive"))
	}
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
