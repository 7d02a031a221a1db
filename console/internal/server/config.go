package server

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Config is the console server's settings, read from the environment.
type Config struct {
	// Addr is where it listens: CONSOLE_ADDR, else CONSOLE_URL's host and port.
	Addr string
	// Origin is CONSOLE_URL's origin: the only Origin a state-changing call may carry.
	Origin string
	// SecureCookie is whether the session cookie is Secure (and __Host- prefixed): always,
	// unless CONSOLE_URL is plain http on a loopback host.
	SecureCookie bool
	// BaseURL is the public API the console's server forwards the page's /api/ calls to.
	BaseURL string
	// APIOrigin is BaseURL's origin.
	APIOrigin string
	// SessionStore is where sessions live: "memory" (one console process; a restart signs
	// everyone out of the console) or "redis" (restarts and replicas keep them).
	SessionStore string
	// RedisURL is redis://[:password@]host:port/db for the redis store; it may hold a password.
	RedisURL string
	// APISourceAddr, when set (CONSOLE_API_SOURCE_ADDR), is the local address the console's
	// calls to the API leave from. The gateway trusts X-Forwarded-For only from the addresses
	// in its TRUSTED_PROXIES; on one host (make run) a source address of the console's own
	// lets the gateway trust the console without trusting every local client.
	APISourceAddr net.IP
}

// LoadConfig reads CONSOLE_URL (default http://127.0.0.1:5173), CONSOLE_ADDR and BASE_URL
// (default http://127.0.0.1:8080).
func LoadConfig(getenv func(string) string) (Config, error) {
	consoleURL := orDefault(getenv("CONSOLE_URL"), "http://127.0.0.1:5173")
	base := strings.TrimRight(orDefault(getenv("BASE_URL"), "http://127.0.0.1:8080"), "/")
	var errs []error
	cu, err := parseOrigin(consoleURL)
	if err != nil {
		errs = append(errs, fmt.Errorf("CONSOLE_URL: %w", err))
	} else if cu.Scheme == "http" && !isLoopback(cu.Hostname()) {
		// The session cookie is Secure outside loopback; over plain http the browser would
		// never send it back.
		errs = append(errs, fmt.Errorf("CONSOLE_URL: %q is plain http on a host that is not loopback: serve the console over https", consoleURL))
	}
	bu, err := parseOrigin(base)
	if err != nil {
		errs = append(errs, fmt.Errorf("BASE_URL: %w", err))
	}
	store := orDefault(getenv("CONSOLE_SESSION_STORE"), "memory")
	redisURL := getenv("REDIS_URL")
	switch store {
	case "memory":
	case "redis":
		if redisURL == "" {
			errs = append(errs, errors.New("CONSOLE_SESSION_STORE=redis needs REDIS_URL"))
		} else if _, err := redis.ParseURL(redisURL); err != nil {
			// The parser's message may quote the URL, password and all: name the variable only.
			errs = append(errs, errors.New("REDIS_URL is not a redis:// URL"))
		}
	default:
		errs = append(errs, fmt.Errorf("CONSOLE_SESSION_STORE must be memory or redis, not %q", store))
	}
	var source net.IP
	if raw := getenv("CONSOLE_API_SOURCE_ADDR"); raw != "" {
		if source = net.ParseIP(raw); source == nil {
			errs = append(errs, fmt.Errorf("CONSOLE_API_SOURCE_ADDR: %q is not an IP address", raw))
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	addr := getenv("CONSOLE_ADDR")
	if addr == "" {
		addr = cu.Host
		if cu.Port() == "" {
			addr += map[string]string{"http": ":80", "https": ":443"}[cu.Scheme]
		}
	}
	return Config{
		Addr:          addr,
		Origin:        cu.Scheme + "://" + cu.Host,
		SecureCookie:  cu.Scheme == "https",
		BaseURL:       base,
		APIOrigin:     bu.Scheme + "://" + bu.Host,
		SessionStore:  store,
		RedisURL:      redisURL,
		APISourceAddr: source,
	}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseOrigin(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	return u, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
