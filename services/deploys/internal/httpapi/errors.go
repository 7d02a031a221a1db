package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/deploy"
)

// toHTTP is the one place where the deploys service's errors become HTTP answers. Anything
// it does not know passes through, and httperror.Handler answers it as a bare 500.
func toHTTP(err error) error {
	if e := cronToHTTP(err); e != nil {
		return e
	}
	if e := previewToHTTP(err); e != nil {
		return e
	}
	var le *deploy.LimitError
	if errors.As(err, &le) {
		switch {
		case errors.Is(le.Err, deploy.ErrUploadTooLarge):
			return httperror.New(http.StatusRequestEntityTooLarge, "upload_too_large").WithLimit(le.Limit, le.Plan).
				WithMessage("the upload is larger than the %s plan's %d bytes", le.Plan, le.Limit)
		case errors.Is(le.Err, deploy.ErrDeployLimit):
			return httperror.New(http.StatusTooManyRequests, "deploy_limit_reached").WithLimit(le.Limit, le.Plan).
				WithRetryAfter(le.RetryAfter).WithMessage("the %s plan allows %d deploys under way at once", le.Plan, le.Limit)
		}
	}
	if le != nil {
		if e := formationLimit(le); e != nil {
			return e
		}
	}
	var ue *deploy.UnknownProcessTypeError
	if errors.As(err, &ue) {
		e := httperror.New(http.StatusBadRequest, "unknown_process_type").
			WithMessage("the live deploy declares no process type %q", ue.Type)
		e.Body.Type = ue.Type
		return e
	}
	var he *deploy.HoldError
	if errors.As(err, &he) {
		e := httperror.New(http.StatusPaymentRequired, "billing_hold").
			WithMessage("new deploys are refused until the outstanding invoice is paid; rollbacks still work")
		e.Body.Hold = he.Hold.View(he.Stage)
		return e
	}
	var pe *deploy.ParamError
	if errors.As(err, &pe) {
		return httperror.New(http.StatusBadRequest, "invalid_parameter").WithMessage("%s %s", pe.Name, pe.Reason)
	}
	bad := func(code string) error {
		return httperror.New(http.StatusBadRequest, code).WithMessage("%s", err.Error())
	}
	switch {
	case errors.Is(err, deploy.ErrAppNotFound), errors.Is(err, deploy.ErrNotFound):
		return httperror.NotFound
	case errors.Is(err, deploy.ErrInvalidPath):
		return bad("invalid_path")
	case errors.Is(err, deploy.ErrInvalidImage):
		return bad("invalid_image")
	case errors.Is(err, deploy.ErrInvalidRelease):
		return bad("invalid_release")
	case errors.Is(err, deploy.ErrForceWithoutImage):
		return bad("force_restart_requires_image")
	case errors.Is(err, deploy.ErrKindMismatch):
		return bad("kind_mismatch")
	case errors.Is(err, deploy.ErrNoFiles):
		return bad("no_files")
	case errors.Is(err, deploy.ErrInvalidBody):
		return bad("invalid_body")
	case errors.Is(err, deploy.ErrNotCancellable):
		return httperror.New(http.StatusConflict, "not_cancellable").WithMessage("only building and releasing deploys can be cancelled")
	case errors.Is(err, deploy.ErrNotAService):
		return httperror.New(http.StatusConflict, "not_a_service").WithMessage("a static app runs no processes to scale")
	case errors.Is(err, deploy.ErrNotRollbackable):
		return httperror.New(http.StatusConflict, "not_rollbackable").WithMessage("only a deploy that was once live can be rolled back to")
	case errors.Is(err, deploy.ErrSnapshotUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "environment_unavailable").WithMessage("the app's environment could not be snapshotted; try again")
	case errors.Is(err, deploy.ErrAppUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").WithMessage("the app could not be looked up; try again")
	case errors.Is(err, deploy.ErrPlanUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").WithMessage("the account's plan could not be read from billing; try again")
	}
	return err
}

// formationLimit answers a formation over the plan: 403 with the limit and the plan, or nil
// for another limit.
func formationLimit(le *deploy.LimitError) *httperror.Error {
	var code, what string
	switch {
	case errors.Is(le.Err, deploy.ErrInstancesPerProcess):
		code, what = "instances_per_process_limit", "instances of one process type"
	case errors.Is(le.Err, deploy.ErrInstancesTotal):
		code, what = "instances_total_limit", "instances in all"
	case errors.Is(le.Err, deploy.ErrProcessTypes):
		code, what = "process_types_limit", "running process types"
	default:
		return nil
	}
	return httperror.New(http.StatusForbidden, code).WithLimit(le.Limit, le.Plan).
		WithMessage("the %s plan allows %d %s", le.Plan, le.Limit, what)
}
