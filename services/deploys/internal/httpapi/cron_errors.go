package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/cron"
)

// cronToHTTP translates the cron domain's errors; nil when err is none of them.
func cronToHTTP(err error) *httperror.Error {
	var fe *cron.FieldError
	if errors.As(err, &fe) {
		e := httperror.New(http.StatusBadRequest, "invalid_parameter").WithField(fe.Field).WithMessage("%s %s", fe.Field, fe.Reason)
		if fe.Limit != nil {
			e.Body.Limit = fe.Limit
		}
		return e
	}
	var le *cron.LimitError
	if errors.As(err, &le) {
		switch {
		case errors.Is(le.Err, cron.ErrJobLimit):
			return httperror.New(http.StatusForbidden, "cron_job_limit_reached").WithLimit(le.Limit, le.Plan).
				WithMessage("the %s plan allows %d cron jobs per app", le.Plan, le.Limit)
		case errors.Is(le.Err, cron.ErrTooFrequent):
			return httperror.New(http.StatusForbidden, "cron_interval_too_short").WithLimit(le.Limit, le.Plan).
				WithMessage("the %s plan runs a cron job at most every %d minutes", le.Plan, le.Limit)
		}
	}
	switch {
	case errors.Is(err, cron.ErrJobNotFound):
		e := httperror.Plain(http.StatusNotFound, "not found")
		e.Body.Code = "not_found"
		return e
	case errors.Is(err, cron.ErrJobExists):
		return httperror.New(http.StatusConflict, "cron_job_exists").WithMessage("the app has a cron job of that name")
	case errors.Is(err, cron.ErrNotAService):
		return httperror.New(http.StatusConflict, "not_a_service").WithMessage("cron jobs run only in service apps")
	case errors.Is(err, cron.ErrRunInProgress):
		return httperror.New(http.StatusConflict, "run_in_progress").WithMessage("the job's runs in progress leave no room for another under its concurrency policy (forbid: one at a time; allow: 10)")
	case errors.Is(err, cron.ErrNoLiveDeploy):
		return httperror.New(http.StatusConflict, "no_live_deploy").WithMessage("the app has no live deploy to run the job from")
	}
	return nil
}
