package httperror

import (
	"errors"
	"log/slog"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// Handler is a Fiber ErrorHandler writing the contract's body. Errors that are neither *Error
// nor *fiber.Error are logged with their detail and answered with a bare 500.
func Handler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		he, ok := From(err)
		if !ok {
			var fe *fiber.Error
			if errors.As(err, &fe) {
				he = ForStatus(fe.Code)
			} else {
				log.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "route", c.Route().Path, "err", err.Error())
				he = Internal
			}
		}
		return Write(c, he)
	}
}

// Write sends he as the response, with Retry-After on errors that carry it.
func Write(c *fiber.Ctx, he *Error) error {
	if he.Body.RetryAfter != nil {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(*he.Body.RetryAfter))
	}
	return c.Status(he.Status).JSON(he.Body)
}
