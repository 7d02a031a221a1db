// Package config is the gateway's one configuration struct, read from the environment.
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/profiling"
)

// Config is everything the gateway reads at start.
type Config struct {
	// Addr is where the public API listens.
	Addr string `env:"GATEWAY_ADDR, default=127.0.0.1:8080"`
	// MetricsAddr answers GET /metrics (pkg/metrics) apart from the public port, so the public
	// API never does; unset, no metrics listener. `make run` sets 127.0.0.1:8190.
	MetricsAddr string `env:"GATEWAY_METRICS_ADDR"`

	// IdentityURL … DatabasesURL are where the gateway reaches each service it routes to.
	IdentityURL  string `env:"IDENTITY_URL, default=http://127.0.0.1:8101"`
	BillingURL   string `env:"BILLING_URL, default=http://127.0.0.1:8102"`
	AppsURL      string `env:"APPS_URL, default=http://127.0.0.1:8103"`
	DeploysURL   string `env:"DEPLOYS_URL, default=http://127.0.0.1:8104"`
	LogsURL      string `env:"LOGS_URL, default=http://127.0.0.1:8105"`
	DatabasesURL string `env:"DATABASES_URL, default=http://127.0.0.1:8106"`

	// ReadyUpstreams are the services whose /readyz the gateway's /readyz waits for: every
	// service that runs.
	ReadyUpstreams []string `env:"GATEWAY_READY_UPSTREAMS, default=identity,billing,apps,deploys,logs,databases"`
	// ReadyCacheTTL is how long one round of those probes answers /readyz, so /readyz cannot
	// multiply load onto the services.
	ReadyCacheTTL time.Duration `env:"GATEWAY_READY_CACHE, default=1s"`

	// The browser origins of Tori's own front ends; CORS_ORIGINS defaults to these three.
	ConsoleURL  string   `env:"CONSOLE_URL, default=http://127.0.0.1:5173"`
	DocsURL     string   `env:"DOCS_URL, default=http://127.0.0.1:5174"`
	AdminURL    string   `env:"ADMIN_URL, default=http://127.0.0.1:5175"`
	CORSOrigins []string `env:"CORS_ORIGINS"`

	// AuthLimitPer15Min is the size of each per-address bucket on the /api/auth routes.
	AuthLimitPer15Min int `env:"AUTH_LIMIT_PER_15MIN, default=20"`
	// TrustedProxies are addresses or CIDRs whose X-Forwarded-For names the client.
	TrustedProxies []string `env:"TRUSTED_PROXIES"`

	// SigningKey is the HMAC key the gateway signs callers with (pkg/callerid).
	SigningKey string `env:"GATEWAY_SIGNING_KEY, required" secret:"true"`

	// DatabaseURL is the service's own Postgres role, written by bin/bootstrap; it runs
	// its migrations as that role and refuses to start as a superuser.
	DatabaseURL string `env:"GATEWAY_DATABASE_URL"`
	// AMQPURL is the service's own broker user, written by bin/bootstrap.
	AMQPURL string `env:"GATEWAY_AMQP_URL"`
	// DBMaxConns bounds the gateway's pool of connections to its own schema (idempotency keys).
	DBMaxConns int32 `env:"GATEWAY_DB_MAX_CONNS, default=16"`
	// TokenCacheTTL is how long a token identity checked is trusted without asking again
	// (dropped sooner on identity's events).
	TokenCacheTTL time.Duration `env:"TOKEN_CACHE_TTL, default=30s"`
	// AccountCacheTTL is how long identity's answer to GET /api/account is kept and served by
	// the gateway (dropped sooner on identity.account.updated); 0 forwards every read.
	AccountCacheTTL time.Duration `env:"ACCOUNT_CACHE_TTL, default=30s"`

	// RateLimitStore keeps the rate-limit counters: "memory" for one gateway, "redis" (with
	// REDIS_URL) wherever several gateways share the limits.
	RateLimitStore string `env:"RATE_LIMIT_STORE, default=memory"`
	// RedisURL is redis://[:password@]host:port/db; it may hold a password.
	RedisURL string `env:"REDIS_URL" secret:"true"`
	// RateLimitPrefix starts every counter's key in Redis, so gateways of different
	// installations (or tests) sharing one Redis never count together.
	RateLimitPrefix string `env:"RATE_LIMIT_PREFIX, default=tori:rl:"`

	// MaxConnsPerIP bounds concurrent connections from one peer address; a client past it is
	// answered 429 and closed, so one address cannot exhaust the gateway's sockets.
	MaxConnsPerIP int `env:"GATEWAY_MAX_CONNS_PER_IP, default=256"`

	// LogStreamsPerAccount is how many log streams one account may have open on this
	// gateway at once; one more is 429 too_many_streams.
	LogStreamsPerAccount int `env:"GATEWAY_LOG_STREAMS_PER_ACCOUNT, default=10"`
	// ShutdownTimeout bounds how long in-flight requests may finish after a stop signal.
	ShutdownTimeout time.Duration `env:"GATEWAY_SHUTDOWN_TIMEOUT, default=10s"`

	bus.Config
	// Profiles for profiling under load (PROFILE_ADDR, loopback only); off by default.
	Profiling profiling.Config
}

// Upstreams are the services the gateway routes to, by name.
func (c Config) Upstreams() map[string]string {
	return map[string]string{
		"identity":  c.IdentityURL,
		"billing":   c.BillingURL,
		"apps":      c.AppsURL,
		"deploys":   c.DeploysURL,
		"logs":      c.LogsURL,
		"databases": c.DatabasesURL,
	}
}

// ReadyTargets are the ReadyUpstreams with their base URLs.
func (c Config) ReadyTargets() map[string]string {
	all := c.Upstreams()
	out := map[string]string{}
	for _, name := range c.ReadyUpstreams {
		name = strings.TrimSpace(name)
		if name != "" {
			out[name] = strings.TrimSuffix(all[name], "/")
		}
	}
	return out
}

// AllowedOrigins is CORS_ORIGINS, or the console, docs and admin origins when it is unset,
// each reduced to scheme://host[:port] as a browser sends it in Origin.
func (c Config) AllowedOrigins() []string {
	raw := c.CORSOrigins
	if len(raw) == 0 {
		raw = []string{c.ConsoleURL, c.DocsURL, c.AdminURL}
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		if o, err := origin(r); err == nil {
			out = append(out, o)
		}
	}
	return out
}

// Proxies parses TRUSTED_PROXIES; a bare address becomes a one-address prefix.
func (c Config) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is neither an address nor a CIDR", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Validate checks the configuration once it is loaded.
func (c Config) Validate() error {
	var errs []error
	for name, u := range c.Upstreams() {
		if err := baseURL(u); err != nil {
			errs = append(errs, fmt.Errorf("%s_URL: %w", strings.ToUpper(name), err))
		}
	}
	for _, name := range c.ReadyUpstreams {
		if _, ok := c.Upstreams()[strings.TrimSpace(name)]; !ok && strings.TrimSpace(name) != "" {
			errs = append(errs, fmt.Errorf("GATEWAY_READY_UPSTREAMS: %q is not a service the gateway routes to", name))
		}
	}
	if c.ReadyCacheTTL <= 0 {
		errs = append(errs, errors.New("GATEWAY_READY_CACHE must be positive"))
	}
	for _, o := range c.CORSOrigins {
		if _, err := origin(o); err != nil {
			errs = append(errs, fmt.Errorf("CORS_ORIGINS: %q: %w", o, err))
		}
	}
	if len(c.AllowedOrigins()) == 0 {
		errs = append(errs, errors.New("CORS_ORIGINS: no valid origin"))
	}
	if _, err := c.Proxies(); err != nil {
		errs = append(errs, err)
	}
	switch c.RateLimitStore {
	case "memory":
	case "redis":
		if c.RedisURL == "" {
			errs = append(errs, errors.New("RATE_LIMIT_STORE=redis needs REDIS_URL"))
		}
	default:
		errs = append(errs, fmt.Errorf("RATE_LIMIT_STORE must be memory or redis, not %q", c.RateLimitStore))
	}
	if c.AuthLimitPer15Min < 1 {
		errs = append(errs, errors.New("AUTH_LIMIT_PER_15MIN must be at least 1"))
	}
	// An HMAC key shorter than this is guessable; `make run` generates 64 hex characters.
	if len(c.SigningKey) < 16 {
		errs = append(errs, errors.New("GATEWAY_SIGNING_KEY must be at least 16 characters"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("GATEWAY_DATABASE_URL is required (bin/bootstrap writes it to DATA_DIR/secrets/gateway.env)"))
	}
	if c.DBMaxConns < 1 {
		errs = append(errs, errors.New("GATEWAY_DB_MAX_CONNS must be at least 1"))
	}
	if c.TokenCacheTTL < 0 {
		errs = append(errs, errors.New("TOKEN_CACHE_TTL must not be negative (0 disables the cache)"))
	}
	if c.AccountCacheTTL < 0 {
		errs = append(errs, errors.New("ACCOUNT_CACHE_TTL must not be negative (0 disables the copy)"))
	}
	if c.MaxConnsPerIP < 1 {
		errs = append(errs, errors.New("GATEWAY_MAX_CONNS_PER_IP must be at least 1"))
	}
	if c.LogStreamsPerAccount < 1 {
		errs = append(errs, fmt.Errorf("GATEWAY_LOG_STREAMS_PER_ACCOUNT must be at least 1, not %d", c.LogStreamsPerAccount))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("GATEWAY_SHUTDOWN_TIMEOUT must be positive"))
	}
	if err := c.BusConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Profiling.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// baseURL accepts scheme://host[:port] only: the gateway appends the request's own path, so a
// path prefix here would silently change every route.
func baseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be http(s)://host[:port]")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return errors.New("must have no path, query or user")
	}
	return nil
}

func origin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("an origin is http(s)://host[:port]")
	}
	if u.Path != "" && u.Path != "/" {
		return "", errors.New("an origin has no path")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// BusConfig is the bus configuration with the service's own broker user.
func (c Config) BusConfig() bus.Config { return c.Config.WithURL(c.AMQPURL) }
