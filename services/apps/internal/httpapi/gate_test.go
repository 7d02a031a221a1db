package httpapi_test

import (
	"reflect"
	"strings"
	"testing"

	"tori.dev/contract/access"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/apps/internal/httpapi"
)

// Every /api route has the access gate as its first route-level handler, and every one is
// in the access table: a route added without the gate, or one the table does not know (which
// the gate answers 404), fails here before it ships.
func TestEveryAPIRouteIsGuardedByTheGate(t *testing.T) {
	gate := accessgate.New(nil, nil, nil, nil)
	check := reflect.ValueOf(gate.Check).Pointer()
	app := httpapi.New(httpapi.Deps{Gate: gate})
	n := 0
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		n++
		if len(r.Handlers) < 2 || reflect.ValueOf(r.Handlers[0]).Pointer() != check {
			t.Errorf("%s %s is served without the access gate in front (%d handlers)", r.Method, r.Path, len(r.Handlers))
		}
		if _, ok := access.Find(r.Method, r.Path); !ok {
			t.Errorf("%s %s is not in contract/access's table", r.Method, r.Path)
		}
	}
	if n == 0 {
		t.Fatal("no /api routes found")
	}
}
