package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
	"tori.dev/services/gateway/internal/auth"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/ratelimit"
)

// errNoRoute: no service owns the path.
var errNoRoute = errors.New("httpapi: no route")

var (
	badGateway = httperror.New(http.StatusBadGateway, "bad_gateway")
	tooLarge   = httperror.New(http.StatusRequestEntityTooLarge, "payload_too_large")
	badRequest = httperror.New(http.StatusBadRequest, "bad_request")
)

// toHTTP is the one place where the gateway's errors become responses. Detail that must not
// reach a client (an upstream's address, a dial error) goes to the log only.
func toHTTP(c *fiber.Ctx, log *slog.Logger, err error) *httperror.Error {
	var exceeded *ratelimit.Exceeded
	switch {
	case errors.As(err, &exceeded):
		return httperror.New(http.StatusTooManyRequests, exceeded.Code).WithRetryAfter(exceeded.RetryAfter)
	case errors.Is(err, auth.ErrUnauthorized):
		return httperror.Unauthorized
	case errors.Is(err, auth.ErrUnavailable), errors.Is(err, proxy.ErrUpstream):
		log.WarnContext(c.UserContext(), "upstream failed", "err", err.Error())
		return badGateway
	case errors.Is(err, proxy.ErrTooLarge):
		return tooLarge
	case errors.Is(err, proxy.ErrBadRequest):
		return badRequest
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
