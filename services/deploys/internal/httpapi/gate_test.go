package httpapi_test

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/access"
	"tori.dev/pkg/accessgate"
)

// gateCheck is the name of the gate's Check as a handler (a method value's code is shared by
// every gate).
var gateCheck = handlerName((*accessgate.Gate)(nil).Check)

func handlerName(h fiber.Handler) string {
	return runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
}

// ungated lists the /api routes of app without the gate's Check before their last handler,
// or missing from the access table (which the gate answers 404).
func ungated(app *fiber.App) (bad []string, checked int) {
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		checked++
		name := r.Method + " " + r.Path
		if _, ok := access.Find(r.Method, r.Path); !ok {
			bad = append(bad, name+" (not in the access table)")
			continue
		}
		gated := false
		for _, h := range r.Handlers[:len(r.Handlers)-1] {
			gated = gated || handlerName(h) == gateCheck
		}
		if !gated {
			bad = append(bad, name)
		}
	}
	return bad, checked
}

// Every route the service serves under /api has the access gate in front of its handler.
func TestEveryRouteIsGated(t *testing.T) {
	e := newEnv(t, testPlan)
	bad, checked := ungated(e.app)
	if len(bad) > 0 {
		t.Fatalf("routes without the access gate: %v", bad)
	}
	// deploys (5), formation (2) and crons (7), each GET also as HEAD.
	if checked < 14 {
		t.Fatalf("only %d /api routes walked", checked)
	}

	// The walk itself finds a route added without the gate.
	app := fiber.New()
	app.Get("/api/apps/:slug/deploys", func(c *fiber.Ctx) error { return nil })
	app.Post("/api/apps/:slug/secret", (*accessgate.Gate)(nil).Check, func(c *fiber.Ctx) error { return nil })
	if bad, _ := ungated(app); len(bad) != 3 {
		t.Fatalf("an ungated app passed the walk: %v", bad)
	}
}
