package main

import (
	"strings"

	"tori.dev/services/gateway/internal/config"
)

func trimBase(u string) string { return strings.TrimSuffix(u, "/") }

// upstreams are the services' base URLs by owner, without a trailing slash.
func upstreams(cfg config.Config) map[string]string {
	out := map[string]string{}
	for name, u := range cfg.Upstreams() {
		out[name] = trimBase(u)
	}
	return out
}
