package httperror

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/gofiber/fiber/v2"
)

// Recover turns a panicking handler into a 500 in the contract's shape, so one bad request
// cannot take the service down with it. The log line names the route and carries the panic
// and the stack, never the request's headers or body: those hold tokens and secrets.
func Recover(log *slog.Logger) fiber.Handler {
	if log == nil {
		log = slog.Default()
	}
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(c.UserContext(), "handler panicked",
					"method", c.Method(),
					"route", c.Route().Path,
					"panic", fmt.Sprintf("%T: %v", p, p),
					"stack", string(debug.Stack()))
				err = Internal
			}
		}()
		return c.Next()
	}
}
