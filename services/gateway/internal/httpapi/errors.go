package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/logstreams"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
)

// errNoRoute: no service owns the path.
var errNoRoute = errors.New("httpapi: no route")

// unavailable is a service that could not be reached or gave no answer.
type unavailable struct {
	owner string
	err   error
}

func (u *unavailable) Error() string { return u.owner + ": " + u.err.Error() }
func (u *unavailable) Unwrap() error { return u.err }

// serviceUnavailable is every answer for a service that is down or not listening: only its
// own routes answer so, and a client may retry.
var serviceUnavailable = httperror.New(http.StatusServiceUnavailable, "service_unavailable")

// tokenExpired answers an API token past its end: still 401, with a code a client (a CI job
// holding a scoped token) can tell from a revoked or mistyped one.
var tokenExpired = httperror.New(http.StatusUnauthorized, "token_expired").
	WithMessage("This API token has expired; create a new one.")

var (
	tooLarge   = httperror.New(http.StatusRequestEntityTooLarge, "payload_too_large")
	badRequest = httperror.New(http.StatusBadRequest, "bad_request")
)

// toHTTP is the one place where the gateway's errors become responses. Detail that must not
// reach a client (an upstream's address, a dial error) goes to the log only.
func toHTTP(c *fiber.Ctx, log *slog.Logger, err error) *httperror.Error {
	var (
		exceeded *ratelimit.Exceeded
		down     *unavailable
	)
	switch {
	case errors.As(err, &exceeded):
		rateLimitRefusals.WithLabelValues(exceeded.Code).Inc()
		return httperror.New(http.StatusTooManyRequests, exceeded.Code).WithRetryAfter(exceeded.RetryAfter)
	case errors.Is(err, auth.ErrTokenExpired):
		return tokenExpired
	case errors.Is(err, auth.ErrUnauthorized):
		return httperror.Unauthorized
	case errors.Is(err, auth.ErrUnavailable):
		log.WarnContext(c.UserContext(), "token check failed", "err", err.Error())
		return serviceUnavailable.WithMessage("Tokens cannot be checked right now (the identity service is not answering); retry shortly.")
	case errors.As(err, &down):
		log.WarnContext(c.UserContext(), "upstream failed", "service", down.owner, "err", down.err.Error())
		return serviceUnavailable.WithMessage("The %s service is not answering; retry shortly.", down.owner)
	case errors.Is(err, errKeyInvalid):
		return httperror.New(http.StatusBadRequest, "invalid_idempotency_key").
			WithMessage("Idempotency-Key must be 1 to %d printable ASCII characters.", idempotency.MaxKey)
	case errors.Is(err, errInProgress):
		return httperror.New(http.StatusConflict, "request_in_progress").
			WithMessage("A request with this Idempotency-Key is still running; retry once it has answered.")
	case errors.Is(err, errKeyReused):
		return httperror.New(http.StatusConflict, "idempotency_key_reused").
			WithMessage("This Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request.")
	case errors.Is(err, errCredentialNotKept):
		return httperror.New(http.StatusConflict, "idempotency_key_reused").
			WithMessage("The first request under this Idempotency-Key succeeded and its answer held a new credential, which is never stored, so it cannot be repeated; use a new key to act again.")
	case errors.Is(err, errNotKept):
		return httperror.New(http.StatusConflict, "idempotency_key_reused").
			WithMessage("The first answer under this Idempotency-Key was over 1 MiB and was not kept, so it cannot be repeated; use a new key to act again.")
	case errors.Is(err, errKeysDown):
		return serviceUnavailable.WithMessage("Idempotency keys cannot be checked right now; retry shortly.")
	case errors.Is(err, proxy.ErrTooLarge):
		return tooLarge
	case errors.Is(err, proxy.ErrBadRequest):
		return badRequest
	case errors.Is(err, logstreams.ErrTooMany):
		return httperror.New(http.StatusTooManyRequests, "too_many_streams").
			WithMessage("This account already has its most log streams open; close one (or let one end) and retry.")
	case errors.Is(err, errNoRoute):
		return httperror.NotFound
	}
	if he, ok := httperror.From(err); ok {
		return he
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return httperror.ForStatus(fe.Code)
	}
	log.ErrorContext(c.UserContext(), "request failed", "err", err.Error())
	return httperror.Internal
}

// writeError answers with err's contract body.
func writeError(c *fiber.Ctx, log *slog.Logger, err error) {
	if werr := httperror.Write(c, toHTTP(c, log, err)); werr != nil {
		log.ErrorContext(c.UserContext(), "write error response", "err", werr.Error())
	}
}

// errorHandler serves Fiber's own failures (those raised outside the gateway's handler).
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		writeError(c, log, err)
		return nil
	}
}
