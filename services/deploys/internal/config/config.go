// Package config is the deploys service's configuration, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/objectstore"
	"tori.dev/services/deploys/internal/deploy"
)

// Config is the deploys service's configuration.
type Config struct {
	// Addr is where the HTTP API listens; only the gateway should reach it.
	Addr string `env:"DEPLOYS_ADDR, default=127.0.0.1:8104"`
	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY" secret:"true"`
	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"DEPLOYS_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"DEPLOYS_AMQP_URL"`
	// SweepEvery is how often overdue deploys are closed, deleted apps cleaned and
	// unreferenced artifacts removed.
	SweepEvery time.Duration `env:"DEPLOYS_SWEEP_EVERY, default=15s"`
	// ArtifactGrace is how old an unreferenced artifact must be before the artifact sweep removes it.
	ArtifactGrace time.Duration `env:"DEPLOYS_ARTIFACT_GRACE, default=10m"`
	// ShutdownTimeout bounds how long in-flight requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"DEPLOYS_SHUTDOWN_TIMEOUT, default=10s"`
	// AppLookupTimeout bounds asking the apps service for an app this service has no copy
	// of yet during a request.
	AppLookupTimeout time.Duration `env:"DEPLOYS_APP_LOOKUP_TIMEOUT, default=2s"`
	// ImageRegistries lists the registries (host or host:port) images may come from; empty
	// allows any registry named by a public DNS name. Loopback, link-local and private
	// registries are refused either way (deploy.Registries).
	ImageRegistries []string `env:"DEPLOYS_IMAGE_REGISTRIES"`
	// CronMinIntervalMinutes is a test-only override: when positive it replaces every plan's minimum
	// minutes between a cron job's firings (benchmarks and end-to-end tests run an
	// every-minute job on any plan). 0, the default, keeps the plan's.
	CronMinIntervalMinutes int64 `env:"DEPLOYS_CRON_MIN_INTERVAL_MINUTES, default=0"`
	// AppsDomain is {apps_domain}, as the apps service reads it; PreviewsDomain defaults under it.
	AppsDomain string `env:"APPS_DOMAIN, default=apps.localhost"`
	// PreviewsDomain is where previews are served: https://<slug>-<id>.<PreviewsDomain>
	// (names.PreviewHost). Empty: preview.<APPS_DOMAIN>. The zoneagent reads the same setting.
	PreviewsDomain string `env:"PREVIEWS_DOMAIN"`
	// CronTickEvery is how often the cron scheduler looks for due ticks.
	CronTickEvery time.Duration `env:"DEPLOYS_CRON_TICK_EVERY, default=1s"`
	// The object store every artifact lives in, and deploys' own account and bucket in it,
	// written by bin/bootstrap (docs/objectstore.md). No folder holds an artifact: a zone
	// on another machine fetches one by a presigned URL this service hands it.
	ObjectStoreURL       string `env:"OBJECT_STORE_URL"`
	ObjectStoreAccessKey string `env:"DEPLOYS_OBJECT_STORE_ACCESS_KEY"`
	ObjectStoreSecretKey string `env:"DEPLOYS_OBJECT_STORE_SECRET_KEY" secret:"true"`
	ObjectStoreBucket    string `env:"DEPLOYS_OBJECT_STORE_BUCKET"`

	bus.Config
}

// Previews is the domain previews are served under: PREVIEWS_DOMAIN, else
// preview.<APPS_DOMAIN>.
func (c *Config) Previews() string {
	if c.PreviewsDomain != "" {
		return strings.ToLower(c.PreviewsDomain)
	}
	return "preview." + strings.ToLower(c.AppsDomain)
}

// Registries is the image registry policy of DEPLOYS_IMAGE_REGISTRIES.
func (c *Config) Registries() (deploy.Registries, error) {
	r, err := deploy.NewRegistries(c.ImageRegistries)
	if err != nil {
		return deploy.Registries{}, fmt.Errorf("DEPLOYS_IMAGE_REGISTRIES: %w", err)
	}
	return r, nil
}

// ObjectStore is deploys' way into its bucket.
func (c *Config) ObjectStore() objectstore.Config {
	return objectstore.Config{URL: c.ObjectStoreURL, AccessKey: c.ObjectStoreAccessKey, SecretKey: c.ObjectStoreSecretKey, Bucket: c.ObjectStoreBucket}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("DEPLOYS_ADDR %q is not host:port", c.Addr))
	}
	if c.SigningKey == "" {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY is required"))
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("DEPLOYS_DATABASE_URL must be a postgres:// URL (bin/bootstrap writes it to DATA_DIR/secrets/deploys.env)"))
	}
	if _, err := c.Registries(); err != nil {
		errs = append(errs, err)
	}
	if !bareDomain(c.AppsDomain) {
		errs = append(errs, fmt.Errorf("APPS_DOMAIN must be a bare domain name, not %q", c.AppsDomain))
	}
	if c.PreviewsDomain != "" && !bareDomain(c.PreviewsDomain) {
		errs = append(errs, fmt.Errorf("PREVIEWS_DOMAIN must be a bare domain name, not %q", c.PreviewsDomain))
	}
	// objectstore.New checks the URL and that every credential is there, reaching nothing;
	// its message names no value.
	if _, err := objectstore.New(c.ObjectStore()); err != nil {
		errs = append(errs, fmt.Errorf("the artifact store needs OBJECT_STORE_URL and DEPLOYS_OBJECT_STORE_ACCESS_KEY, _SECRET_KEY, _BUCKET (bin/bootstrap writes them to DATA_DIR/secrets/deploys.env): %w", err))
	}
	if c.SweepEvery <= 0 || c.ShutdownTimeout <= 0 || c.ArtifactGrace <= 0 || c.AppLookupTimeout <= 0 {
		errs = append(errs, errors.New("DEPLOYS_SWEEP_EVERY, DEPLOYS_ARTIFACT_GRACE, DEPLOYS_SHUTDOWN_TIMEOUT and DEPLOYS_APP_LOOKUP_TIMEOUT must be positive"))
	}
	if c.CronMinIntervalMinutes < 0 || c.CronTickEvery <= 0 {
		errs = append(errs, errors.New("DEPLOYS_CRON_MIN_INTERVAL_MINUTES must be 0 or more and DEPLOYS_CRON_TICK_EVERY positive"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// bareDomain reports whether d is a domain name alone: no scheme, port, path or space.
func bareDomain(d string) bool {
	return d != "" && !strings.ContainsAny(d, "/: ") && !strings.HasPrefix(d, ".") && !strings.HasSuffix(d, ".")
}

// BusConfig is the bus configuration with the service's own broker user.
func (c *Config) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }
