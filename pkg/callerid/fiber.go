package callerid

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

const localsKey = "callerid.caller"

// Middleware rejects requests whose caller headers the gateway did not sign (401), and stores
// the caller for From. With requireAuth, an unauthenticated caller is rejected too.
func Middleware(key []byte, requireAuth bool, unauthorized error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		caller, err := Verify(key, func(k string) string { return c.Get(k) }, c.Method(), c.OriginalURL(), time.Now())
		if err != nil || (requireAuth && !caller.Authenticated()) {
			return unauthorized
		}
		c.Locals(localsKey, caller)
		return c.Next()
	}
}

// From returns the caller stored by Middleware.
func From(c *fiber.Ctx) Caller {
	caller, _ := c.Locals(localsKey).(Caller)
	return caller
}
