package httpapi_test

import (
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
)

// Every route the service serves under /api has the access gate in front of its handler.
func TestEveryRouteIsGated(t *testing.T) {
	e := newEnv(t, testPlan)
	bad, checked := accessgate.Ungated(e.app)
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
	if bad, _ := accessgate.Ungated(app); len(bad) != 3 {
		t.Fatalf("an ungated app passed the walk: %v", bad)
	}
}
