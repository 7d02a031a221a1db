package testinfra

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
)

var (
	usersOnce sync.Once
	usersPW   string
	usersErr  error
)

// ServiceAMQPURL is the test broker as principal's own user ("test.tori.<principal>"), with
// the permissions bin/bootstrap gives it in production. The users are made once per machine
// (scripts/test.sh makes sure of it before a run), their password kept in the user's cache
// folder or given as TEST_AMQP_PASSWORD (brokeradmin.TestUsersPassword).
func ServiceAMQPURL(t testing.TB, principal string) string {
	t.Helper()
	admin := AMQPURL(t)
	usersOnce.Do(func() { usersPW, usersErr = testUsersPassword(admin) })
	if usersErr != nil {
		t.Fatalf("testinfra: broker users: %v", usersErr)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("testinfra: bad broker url: %v", err)
	}
	u.User = url.UserPassword(bus.UserName(brokeradmin.TestPrefix, principal), usersPW)
	return u.String()
}

// servicePrincipal is the bus principal a service of that name runs as.
func servicePrincipal(name, zone string) string {
	if name != "zoneagent" {
		return name
	}
	if zone == "" {
		zone = "local"
	}
	return bus.ZonePrincipal(zone)
}

func testUsersPassword(admin string) (string, error) {
	return brokeradmin.TestUsersPassword(context.Background(), admin)
}
