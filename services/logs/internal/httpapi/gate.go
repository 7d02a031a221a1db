package httpapi

import (
	"context"
	"log/slog"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/pgstore"
)

// AppTeams finds the team that owns an app; *usecase.AppFinder is one.
type AppTeams interface {
	// AppTeam looks in the service's copy of apps, and for an app it has not heard of yet
	// asks the apps service on behalf of each of teams.
	AppTeam(ctx context.Context, teams []string, slug string) (teamID string, found bool, err error)
}

// newGate is the service's one access gate: apps are found in the service's copy; the
// refusals it logs go out through the outbox as logs.audit.recorded.
func newGate(apps AppTeams, db pgstore.Beginner, log *slog.Logger) *accessgate.Gate {
	return accessgate.New(apps.AppTeam, accessgate.Publisher("logs"), db, log)
}
