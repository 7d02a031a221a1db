package callerid

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

const localsKey = "callerid.caller"

// replays is the process's one memory of accepted nonces, shared by every Middleware, so a
// signed request is served once whichever route group sees it.
var replays = NewNonces(DefaultMaxNonces)

// Middleware rejects requests whose caller headers the gateway did not sign for this host,
// method and URI within MaxSkew, or whose nonce was already used (401), and stores the
// caller for From. With requireAuth, an unauthenticated caller is rejected too.
func Middleware(key []byte, requireAuth bool, unauthorized error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		caller, err := VerifyOnce(key, replays, func(k string) string { return c.Get(k) },
			c.Method(), string(c.Context().Host()), c.OriginalURL(), time.Now())
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
