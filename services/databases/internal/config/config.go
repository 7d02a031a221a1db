// Package config is the databases service's one configuration struct, read from the
// environment.
package config

import (
	"errors"
	"fmt"
	"time"

	"tori.dev/pkg/bus"
)

// Config is every setting of the databases service.
type Config struct {
	// Addr is where the HTTP API listens; only the gateway should reach it.
	Addr string `env:"DATABASES_ADDR, default=127.0.0.1:8106"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs its
	// migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"DATABASES_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"DATABASES_AMQP_URL"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY" secret:"true"`

	Bus bus.Config

	// AppLookupTimeout bounds asking the apps service whose app a slug is.
	AppLookupTimeout time.Duration `env:"DATABASES_APP_LOOKUP_TIMEOUT, default=2s"`
	// PlanLookupTimeout bounds asking billing for the account's plan on a create.
	PlanLookupTimeout time.Duration `env:"DATABASES_PLAN_LOOKUP_TIMEOUT, default=2s"`
	// ZoneRequestTimeout bounds asking a database's zone for a dump's download URL or to
	// delete pruned dumps (the dumps live in the zone's bucket; this service holds no
	// object-store credentials).
	ZoneRequestTimeout time.Duration `env:"DATABASES_ZONE_REQUEST_TIMEOUT, default=5s"`
	// DumpHour is the hour (UTC) the nightly dumps start.
	DumpHour int `env:"DATABASE_DUMP_HOUR, default=3"`
	// DumpCheckInterval is how often the nightly job looks for databases due for their dump.
	DumpCheckInterval time.Duration `env:"DATABASES_DUMP_CHECK_INTERVAL, default=1m"`
	// RotationCheckInterval is how often the job looks for rotated-out passwords whose 24
	// hours are up.
	RotationCheckInterval time.Duration `env:"DATABASES_ROTATION_CHECK_INTERVAL, default=1m"`
	// ShutdownTimeout bounds how long requests in flight may take to finish at a stop.
	ShutdownTimeout time.Duration `env:"DATABASES_SHUTDOWN_TIMEOUT, default=10s"`
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASES_DATABASE_URL is required (bin/bootstrap writes it to DATA_DIR/secrets/databases.env)"))
	}
	if c.Addr == "" {
		errs = append(errs, errors.New("DATABASES_ADDR is required"))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"DATABASES_APP_LOOKUP_TIMEOUT", c.AppLookupTimeout},
		{"DATABASES_PLAN_LOOKUP_TIMEOUT", c.PlanLookupTimeout},
		{"DATABASES_ZONE_REQUEST_TIMEOUT", c.ZoneRequestTimeout},
		{"DATABASES_SHUTDOWN_TIMEOUT", c.ShutdownTimeout},
		{"DATABASES_DUMP_CHECK_INTERVAL", c.DumpCheckInterval},
		{"DATABASES_ROTATION_CHECK_INTERVAL", c.RotationCheckInterval},
	} {
		if f.d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, not %s", f.name, f.d))
		}
	}
	if c.DumpHour < 0 || c.DumpHour > 23 {
		errs = append(errs, fmt.Errorf("DATABASE_DUMP_HOUR must be an hour from 0 to 23, not %d", c.DumpHour))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the service's own broker user.
func (c *Config) BusConfig() bus.Config { return c.Bus.WithURL(c.AMQPURL) }
