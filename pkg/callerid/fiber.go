package callerid

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
)

const localsKey = "callerid.caller"

// replays is the process's one memory of accepted nonces, shared by every Middleware, so a
// signed request is served once whichever route group sees it.
var replays = NewNonces(DefaultMaxNonces)

// Unavailable answers a request whose nonce the replay store could not take: the service is
// overloaded, not the caller wrong, so a client (and the gateway) must not read it as "this
// token is unknown".
var Unavailable = httperror.New(503, "service_unavailable")

// Middleware rejects requests whose caller headers the gateway did not sign for this host,
// method and URI within MaxSkew, or whose nonce was already used (401), and stores the
// caller for From. With requireAuth, an unauthenticated caller is rejected too. When the
// replay store is full it answers 503 service_unavailable.
func Middleware(key []byte, requireAuth bool, unauthorized error) fiber.Handler {
	return middleware(key, replays, requireAuth, unauthorized, time.Now)
}

func middleware(key []byte, seen *Nonces, requireAuth bool, unauthorized error, now func() time.Time) fiber.Handler {
	return func(c *fiber.Ctx) error {
		caller, err := VerifyOnce(key, seen, func(k string) string { return c.Get(k) },
			c.Method(), string(c.Context().Host()), c.OriginalURL(), now())
		if errors.Is(err, ErrNoncesFull) {
			return Unavailable
		}
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
