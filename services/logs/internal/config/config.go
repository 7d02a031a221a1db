// Package config is the logs service's one configuration struct, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/profiling"
)

// Config is every setting of the logs service.
type Config struct {
	// Addr is where the HTTP API listens; only the gateway should reach it.
	Addr string `env:"LOGS_ADDR, default=127.0.0.1:8105"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"LOGS_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"LOGS_AMQP_URL"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY" secret:"true"`

	Bus bus.Config

	// MaxRetentionDays is the longest plan's logRetentionDays; whole days older than it are
	// dropped. A plan on record with a longer retention raises it.
	MaxRetentionDays int `env:"LOG_MAX_RETENTION_DAYS, default=30"`
	// MetricsMaxRetentionDays is the longest plan's metricsRetentionDays; whole days of
	// metrics older than it are dropped. A plan on record with a longer retention raises it.
	MetricsMaxRetentionDays int `env:"LOGS_METRICS_MAX_RETENTION_DAYS, default=30"`
	// PartitionsAhead is how many days after today get their partition in advance.
	PartitionsAhead int `env:"LOGS_PARTITIONS_AHEAD, default=2"`
	// MaintenanceInterval spaces the partition upkeep and the bus's record pruning.
	MaintenanceInterval time.Duration `env:"LOGS_MAINTENANCE_INTERVAL, default=15m"`
	// CleanupInterval is how often deleted apps' entries are looked for; it bounds how long
	// after a delete the removal starts.
	CleanupInterval time.Duration `env:"LOGS_CLEANUP_INTERVAL, default=2s"`
	// CleanupBatch is how many rows one delete statement removes.
	CleanupBatch int `env:"LOGS_CLEANUP_BATCH, default=5000"`
	// IngestPrefetch is how many log batches are stored at once, each in its own
	// transaction: overlapping one batch's commit with the next one's COPY.
	IngestPrefetch int `env:"LOGS_INGEST_PREFETCH, default=8"`
	// PlanLookupTimeout bounds asking billing for an unknown account's plan during a read.
	PlanLookupTimeout time.Duration `env:"LOGS_PLAN_LOOKUP_TIMEOUT, default=2s"`
	// AppLookupTimeout bounds asking the apps service for an app this service has no copy
	// of yet during a read.
	AppLookupTimeout time.Duration `env:"LOGS_APP_LOOKUP_TIMEOUT, default=2s"`
	// ProcessedRetention is how long the record of a consumed message is kept, which is how
	// late a redelivery can come and still be recognised. Shorter than the bus's default
	// week because every log batch leaves such a record.
	ProcessedRetention time.Duration `env:"LOGS_PROCESSED_RETENTION, default=72h"`
	// StreamPoll is how often a live stream reads the table for new entries (the one-second
	// delivery promise leaves room for it and the ingest).
	StreamPoll time.Duration `env:"LOGS_STREAM_POLL_INTERVAL, default=250ms"`
	// StreamHeartbeat is the longest quiet spell on a stream before a comment line.
	StreamHeartbeat time.Duration `env:"LOGS_STREAM_HEARTBEAT, default=15s"`
	// StreamIdle closes a stream that sent no entry for this long; StreamLifetime any
	// stream this long after it opened (clients resume with Last-Event-ID).
	StreamIdle     time.Duration `env:"LOGS_STREAM_IDLE, default=30m"`
	StreamLifetime time.Duration `env:"LOGS_STREAM_LIFETIME, default=1h"`
	// StreamLate is how long after its timestamp an entry may be committed and still be
	// streamed (zones ship batches; ingests commit concurrently).
	StreamLate time.Duration `env:"LOGS_STREAM_LATE, default=10s"`
	// DrainLease is how long a replica holds a drain without renewing: a killed replica's
	// drains are taken over this long after it stopped renewing.
	DrainLease time.Duration `env:"LOGS_DRAIN_LEASE, default=15s"`
	// DrainBacklog is the most lines one drain keeps waiting for its receiver; past it the
	// oldest are dropped, counted (dropped24h) and reported in the app's log.
	DrainBacklog int `env:"LOGS_DRAIN_BACKLOG, default=10000"`
	// DrainTestHost and DrainTestCA are for tests only: a host:port a drain may reach although
	// it is loopback or private (the tests' receiver), and the PEM file of the CA that signed
	// its certificate, trusted for that host alone. The host is refused without the CA.
	DrainTestHost string `env:"LOGS_DRAIN_TEST_HOST"`
	DrainTestCA   string `env:"LOGS_DRAIN_TEST_CA"`
	// ShutdownTimeout bounds how long requests in flight may take to finish at a stop.
	ShutdownTimeout time.Duration `env:"LOGS_SHUTDOWN_TIMEOUT, default=10s"`

	// Profiles for profiling under load (PROFILE_ADDR, loopback only); off by default.
	Profiling profiling.Config
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("LOGS_DATABASE_URL is required (bin/bootstrap writes it to DATA_DIR/secrets/logs.env)"))
	}
	if c.Addr == "" {
		errs = append(errs, errors.New("LOGS_ADDR is required"))
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"LOG_MAX_RETENTION_DAYS", c.MaxRetentionDays},
		{"LOGS_METRICS_MAX_RETENTION_DAYS", c.MetricsMaxRetentionDays},
		{"LOGS_CLEANUP_BATCH", c.CleanupBatch},
		{"LOGS_INGEST_PREFETCH", c.IngestPrefetch},
		{"LOGS_DRAIN_BACKLOG", c.DrainBacklog},
	} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, not %d", f.name, f.v))
		}
	}
	if c.PartitionsAhead < 0 {
		errs = append(errs, fmt.Errorf("LOGS_PARTITIONS_AHEAD must not be negative, not %d", c.PartitionsAhead))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"LOGS_MAINTENANCE_INTERVAL", c.MaintenanceInterval},
		{"LOGS_CLEANUP_INTERVAL", c.CleanupInterval},
		{"LOGS_PLAN_LOOKUP_TIMEOUT", c.PlanLookupTimeout},
		{"LOGS_APP_LOOKUP_TIMEOUT", c.AppLookupTimeout},
		{"LOGS_PROCESSED_RETENTION", c.ProcessedRetention},
		{"LOGS_SHUTDOWN_TIMEOUT", c.ShutdownTimeout},
		{"LOGS_STREAM_POLL_INTERVAL", c.StreamPoll},
		{"LOGS_STREAM_HEARTBEAT", c.StreamHeartbeat},
		{"LOGS_STREAM_IDLE", c.StreamIdle},
		{"LOGS_STREAM_LIFETIME", c.StreamLifetime},
		{"LOGS_STREAM_LATE", c.StreamLate},
		{"LOGS_DRAIN_LEASE", c.DrainLease},
	} {
		if f.d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, not %s", f.name, f.d))
		}
	}
	if (c.DrainTestHost == "") != (c.DrainTestCA == "") {
		errs = append(errs, errors.New("LOGS_DRAIN_TEST_HOST and LOGS_DRAIN_TEST_CA go together (tests only)"))
	}
	if c.DrainTestHost != "" {
		if _, _, err := net.SplitHostPort(c.DrainTestHost); err != nil {
			errs = append(errs, fmt.Errorf("LOGS_DRAIN_TEST_HOST must be host:port: %v", err))
		}
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Profiling.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BusConfig is the bus configuration with the service's own broker user.
func (c *Config) BusConfig() bus.Config { return c.Bus.WithURL(c.AMQPURL) }
