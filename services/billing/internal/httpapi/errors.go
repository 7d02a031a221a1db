package httpapi

import (
	"errors"
	"net/http"

	"tori.dev/pkg/httperror"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

// toHTTP is the one place where billing's errors become HTTP answers. Anything it does not
// know passes through, and httperror.Handler answers it as a bare 500 and logs the detail.
func toHTTP(err error) error {
	switch {
	case errors.Is(err, errBadBody):
		return httperror.New(http.StatusBadRequest, "invalid_body").WithMessage("the body must be a JSON object")
	case errors.Is(err, catalog.ErrUnknownPlan), errors.Is(err, catalog.ErrNotPurchasable):
		return httperror.New(http.StatusBadRequest, "invalid_plan").WithMessage("plan must be songbird or flock")
	case errors.Is(err, catalog.ErrUnknownInterval):
		return httperror.New(http.StatusBadRequest, "invalid_interval").WithMessage("interval must be month or year")
	case errors.Is(err, usecase.ErrInvalidSignature):
		return httperror.New(http.StatusBadRequest, "invalid_signature").WithMessage("the webhook signature does not verify")
	case errors.Is(err, usecase.ErrAlreadySubscribed):
		return httperror.New(http.StatusConflict, "already_subscribed").WithMessage("the account has a subscription; change plans in the billing portal")
	case errors.Is(err, usecase.ErrUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "billing_unavailable").WithMessage("paid plans are not enabled yet")
	case errors.Is(err, accounts.ErrInvalidID):
		// The gateway signed a caller whose account id is not one identity issues: treat the
		// caller as unknown rather than guess.
		return httperror.Unauthorized
	}
	return err
}
