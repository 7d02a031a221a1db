package server

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Config is the console server's settings, read from the environment.
type Config struct {
	// Addr is where it listens: CONSOLE_ADDR, else CONSOLE_URL's host and port.
	Addr string
	// BaseURL is the public API the page talks to, handed to it by /config.json.
	BaseURL string
	// APIOrigin is BaseURL's origin, the one place besides its own the page may connect to.
	APIOrigin string
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
	}
	bu, err := parseOrigin(base)
	if err != nil {
		errs = append(errs, fmt.Errorf("BASE_URL: %w", err))
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
	return Config{Addr: addr, BaseURL: base, APIOrigin: bu.Scheme + "://" + bu.Host}, nil
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
