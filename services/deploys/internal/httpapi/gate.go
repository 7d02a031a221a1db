package httpapi

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/pgstore"
)

// AppTeams finds the team that owns an app; *usecase.Service is one.
type AppTeams interface {
	// AppTeam looks in the service's copy of apps, and for an app it has not heard of yet
	// asks the apps service on behalf of each of teams.
	AppTeam(ctx context.Context, teams []string, slug string) (teamID string, found bool, err error)
}

// newGate is the service's one access gate: apps are found in the service's copy, entries
// go out through the outbox as deploys.audit.recorded.
func newGate(apps AppTeams, db pgstore.Beginner, log *slog.Logger) *accessgate.Gate {
	return accessgate.New(apps.AppTeam, accessgate.Publisher("deploys"), db, log)
}

// closeOnError closes the connection after a refused request with a body: a body left
// unread (the gate refuses before the handler reads a byte of an upload) must not be parsed
// as the next request on it. A request without one keeps its connection.
func closeOnError(c *fiber.Ctx) error {
	err := c.Next()
	// fasthttp's length: -1 is a chunked body; a request with neither a length nor chunks
	// (-2 here) has none.
	if n := c.Request().Header.ContentLength(); err != nil && (n > 0 || n == -1) {
		c.Context().SetConnectionClose()
	}
	return err
}

// team is the owner the use cases check objects against: the team the gate located.
func team(c *fiber.Ctx) string { return accessgate.Team(c) }
