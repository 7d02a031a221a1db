package main

import (
	"context"
	"net/url"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
)

// principalURL is the broker as principal's own test user ("test.tori.<principal>", which
// `make test` and `bootstrap -test-users` make), so that every message the bench or its
// services publish carries the user_id of the principal that owns it, as in production: a
// service refuses an event its publisher does not own.
func principalURL(ctx context.Context, admin, principal string) (string, error) {
	pw, err := brokeradmin.TestUsersPassword(ctx, admin)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.User = url.UserPassword(bus.UserName(brokeradmin.TestPrefix, principal), pw)
	return u.String(), nil
}

// principalOf is the principal a service of that name runs as.
func principalOf(service string) string {
	if service == "zoneagent" {
		return bus.ZonePrincipal("local")
	}
	return service
}
