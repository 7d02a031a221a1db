package httpapi

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/databases/internal/usecase"
)

// guard puts contract/access's table before every route: the app's team is located, a caller
// who may not see it gets 404, one whose role or token falls short 403 (an entry in the team's
// audit log), and a change's success commits its audit entry in the change's transaction.
type guard struct {
	gate *accessgate.Gate
}

func newGuard(dbs *usecase.Databases, db pgstore.Beginner, log *slog.Logger) guard {
	// The apps service answers an app only to the team owning it, so the gate asks for the
	// app in each of the caller's teams (one, for a scoped token).
	appTeams := func(ctx context.Context, teams []string, slug string) (string, bool, error) {
		team, found, err := dbs.AppTeam(ctx, teams, slug)
		if err != nil {
			return "", false, toHTTP(err)
		}
		return team, found, nil
	}
	return guard{gate: accessgate.New(appTeams, accessgate.Publisher("databases"), db, log)}
}

// check is the route-level handler before each route's own.
func (g guard) check(c *fiber.Ctx) error {
	c.SetUserContext(usecase.WithAppMemo(c.UserContext()))
	return g.gate.Check(c)
}
