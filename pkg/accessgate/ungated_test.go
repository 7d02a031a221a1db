package accessgate_test

import (
	"slices"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
)

// The walk finds a route served without the gate, and one the access table does not list.
func TestUngatedFindsWhatShipsUnguarded(t *testing.T) {
	gate := accessgate.New(nil, nil, nil, nil)
	ok := func(c *fiber.Ctx) error { return nil }
	app := fiber.New()
	app.Get("/api/apps/:slug", gate.Check, ok)
	app.Delete("/api/apps/:slug", ok)
	app.Get("/api/nowhere", gate.Check, ok)
	app.Get("/healthz", ok)
	bad, walked := accessgate.Ungated(app)
	want := []string{"DELETE /api/apps/:slug", "GET /api/nowhere (not in the access table)", "HEAD /api/nowhere (not in the access table)"}
	slices.Sort(bad)
	if !slices.Equal(bad, want) || walked != 5 {
		t.Fatalf("bad %v (walked %d), want %v (walked 5)", bad, walked, want)
	}
}
