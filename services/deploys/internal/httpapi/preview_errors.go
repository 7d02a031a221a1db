package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// previewToHTTP answers the previews' errors; nil for another error.
func previewToHTTP(err error) error {
	var le *deploy.LimitError
	switch {
	case errors.As(err, &le) && errors.Is(le.Err, preview.ErrLimit):
		return httperror.New(http.StatusForbidden, "preview_limit_reached").WithLimit(le.Limit, le.Plan).
			WithMessage("the %s plan allows %d previews deploying or ready per app", le.Plan, le.Limit)
	case errors.Is(err, preview.ErrNotFound):
		return httperror.NotFound
	case errors.Is(err, preview.ErrExpired):
		return httperror.New(http.StatusConflict, "preview_expired").WithMessage("the preview expired or was deleted")
	case errors.Is(err, preview.ErrNotReady):
		return httperror.New(http.StatusConflict, "preview_not_ready").WithMessage("only a ready preview can be promoted")
	}
	return nil
}
