package config

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"

	"tori.dev/pkg/bus"
)

// DatabaseHost is the configuration of the database host (cmd/zoneagent databases), the
// zone agent's child that hosts its managed databases: the agent's settings it needs and
// nothing else, so no secret of the runtime's or the edge's (the certificate key) reaches a
// process that does not run as root. Same names as Config: the agent hands the host its own
// environment, less what the host must not hold.
type DatabaseHost struct {
	// Zone, DatabaseURL, AMQPURL, PoolerPort and ShutdownTimeout are the agent's (Config),
	// handed to the host by the agent.
	Zone            string        `env:"ZONE_ID, default=local"`
	DatabaseURL     string        `env:"ZONEAGENT_DATABASE_URL"`
	AMQPURL         string        `env:"ZONEAGENT_AMQP_URL"`
	PoolerPort      int           `env:"ZONE_POOLER_PORT, default=6432"`
	ShutdownTimeout time.Duration `env:"ZONEAGENT_SHUTDOWN_TIMEOUT, default=10s"`

	bus.Config
	ManagedDatabases
	ZoneObjectStore
}

// Validate checks the host's configuration: the same rules as the agent's for each setting,
// and the databases' settings present (the agent starts no host without them).
func (h *DatabaseHost) Validate() error {
	var errs []error
	if !zoneRe.MatchString(h.Zone) {
		errs = append(errs, fmt.Errorf("ZONE_ID %q must be a lower-case name", h.Zone))
	}
	if u, err := url.Parse(h.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("ZONEAGENT_DATABASE_URL must be a postgres:// URL"))
	}
	if !h.Enabled() {
		errs = append(errs, errors.New("the database host needs ZONE_POSTGRES_ADMIN_URL"))
	}
	if h.DatabasesDir == "" || h.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("the database host needs ZONE_DATABASES_DIR (the agent sets it) and a positive ZONEAGENT_SHUTDOWN_TIMEOUT"))
	}
	if err := h.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := h.ZoneObjectStore.validate(); err != nil {
		errs = append(errs, err)
	}
	zone := h.AsZone()
	if err := zone.validateDatabases(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the zone's broker user.
func (h *DatabaseHost) BusConfig() bus.Config { return h.Config.WithURL(h.AMQPURL) }

// AsZone is the host's settings as the agent's Config, every other field zero, so the
// helpers written on Config (Pooler, DumpPresignConfig, …) serve the host too.
func (h *DatabaseHost) AsZone() Config {
	return Config{Zone: h.Zone, DatabaseURL: h.DatabaseURL, AMQPURL: h.AMQPURL, PoolerPort: h.PoolerPort,
		ShutdownTimeout: h.ShutdownTimeout, Config: h.Config, ManagedDatabases: h.ManagedDatabases, ZoneObjectStore: h.ZoneObjectStore}
}

// EnvNames are the variables the host's configuration reads: what the agent passes it of
// its own environment (with PATH, LOG_LEVEL and OTEL_*), and nothing else.
func (DatabaseHost) EnvNames() []string {
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, ok := f.Tag.Lookup("env"); ok {
				names = append(names, strings.TrimSpace(strings.Split(tag, ",")[0]))
			} else if f.Type.Kind() == reflect.Struct {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[DatabaseHost]())
	return names
}
