package httpapi_test

import (
	"testing"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/apps/internal/httpapi"
)

// Every /api route has the access gate before its handler, and every one is in the access
// table: a route added without the gate, or one the table does not know (which the gate
// answers 404), fails here before it ships.
func TestEveryAPIRouteIsGuardedByTheGate(t *testing.T) {
	app := httpapi.New(httpapi.Deps{Gate: accessgate.New(nil, nil, nil, nil)})
	bad, walked := accessgate.Ungated(app)
	if len(bad) > 0 {
		t.Fatalf("routes without the access gate: %v", bad)
	}
	// apps (4), env (4) and domains (3), each GET also as HEAD.
	if walked < 11 {
		t.Fatalf("only %d /api routes walked", walked)
	}
}
