package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
)

// toHTTP is the one mapping from the domain's errors to HTTP answers. Anything it does not
// know stays as it is and becomes a logged 500 in httperror.Handler.
func toHTTP(err error) error {
	var invalid *logs.InvalidParameterError
	switch {
	case errors.As(err, &invalid):
		return httperror.New(http.StatusBadRequest, "invalid_parameter").WithMessage("%s", invalid.Error())
	case errors.Is(err, logs.ErrNotFound), errors.Is(err, drains.ErrNotFound):
		return httperror.NotFound
	case errors.Is(err, drains.ErrAddressForbidden):
		return httperror.New(http.StatusBadRequest, "drain_address_forbidden").WithField("url").
			WithMessage("url: the drain's host must resolve to public addresses only (not loopback, private, link-local, unspecified, multicast or CGNAT)")
	case errors.Is(err, drains.ErrLimitReached):
		he := httperror.New(http.StatusForbidden, "drain_limit_reached").
			WithMessage("the plan allows no more drains for this app; delete one or change the plan")
		var le *drains.LimitError
		if errors.As(err, &le) {
			he = he.WithLimit(int64(le.Limit), le.Plan)
		}
		return he
	case errors.Is(err, logs.ErrPlanUnavailable):
		// The plan decides the retention, and nothing guesses it (docs/conventions.md).
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").
			WithMessage("the account's plan could not be read; try again shortly")
	case errors.Is(err, logs.ErrAppUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "service_unavailable").
			WithMessage("the app could not be looked up; try again shortly")
	case errors.Is(err, logs.ErrBeyondRetention):
		return httperror.New(http.StatusGone, "beyond_retention").
			WithMessage("start is older than the plan's log retention")
	case errors.Is(err, metrics.ErrBeyondRetention):
		return httperror.New(http.StatusGone, "beyond_retention").
			WithMessage("start is older than the plan's metrics retention")
	}
	return err
}
