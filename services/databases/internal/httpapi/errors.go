package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/databases/internal/database"
)

// toHTTP is the one mapping from the domain's errors to HTTP answers. Anything it does not
// know stays as it is and becomes a logged 500 in httperror.Handler.
func toHTTP(err error) error {
	switch {
	case errors.Is(err, database.ErrNotFound):
		return httperror.NotFound
	case errors.Is(err, database.ErrServiceOnly):
		return httperror.New(http.StatusBadRequest, "service_only").
			WithMessage("only a service app has a managed database; a static app runs nothing to connect from")
	case errors.Is(err, database.ErrExists):
		return httperror.New(http.StatusConflict, "database_exists").
			WithMessage("the app already has its database")
	case errors.Is(err, database.ErrNotReady):
		return httperror.New(http.StatusConflict, "database_not_ready").
			WithMessage("the database is not ready (being made, failed or being deleted)")
	case errors.Is(err, database.ErrDumpInProgress):
		return httperror.New(http.StatusConflict, "dump_in_progress").
			WithMessage("a dump of this database is running; take another once it has finished")
	case errors.Is(err, database.ErrRestoreExists):
		return httperror.New(http.StatusConflict, "restore_exists").
			WithMessage("one restore at a time: delete the existing one first")
	case errors.Is(err, database.ErrBadDump):
		return httperror.New(http.StatusBadRequest, "invalid_dump").
			WithMessage("dumpId must name a succeeded dump of this app's database")
	case errors.Is(err, database.ErrTransition):
		return httperror.New(http.StatusConflict, "invalid_state").
			WithMessage("the database cannot do that in its current status")
	case errors.Is(err, database.ErrAppUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").
			WithMessage("the app could not be looked up; try again shortly")
	case errors.Is(err, database.ErrZoneUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").
			WithMessage("the database's zone did not answer; try again shortly")
	case errors.Is(err, database.ErrPlanUnavailable):
		// The plan decides the limits, and nothing guesses them (docs/conventions.md).
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").
			WithMessage("the account's plan could not be read; try again shortly")
	}
	return err
}
