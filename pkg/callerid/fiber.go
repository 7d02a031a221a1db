package callerid

import (
	"bytes"
	"errors"
	"io"
	"strconv"
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
// method and URI within MaxSkew, whose nonce was already used, or whose body is not the one
// signed (401), and stores the caller for From. With requireAuth, an unauthenticated caller is rejected too. When the
// replay store is full it answers 503 service_unavailable.
func Middleware(key []byte, requireAuth bool, unauthorized error) fiber.Handler {
	return middleware(key, replays, requireAuth, unauthorized, time.Now).handle
}

// StreamingMiddleware is Middleware for a service that streams request bodies: it leaves the
// body unread, and the handlers read it through Body, which checks it at its end.
func StreamingMiddleware(key []byte, requireAuth bool, unauthorized error) fiber.Handler {
	m := middleware(key, replays, requireAuth, unauthorized, time.Now)
	m.streaming = true
	return m.handle
}

// Body is the request body of a StreamingMiddleware route, checked against its signature at
// its end (CheckedReader): a handler storing it discards what it stored on any read error.
func Body(key []byte, c *fiber.Ctx) *Checked {
	var r io.Reader
	if s := c.Context().RequestBodyStream(); s != nil {
		r = s
	} else {
		r = bytes.NewReader(c.Body())
	}
	return CheckedReader(key, func(k string) string { return c.Get(k) }, r)
}

type verifier struct {
	key          []byte
	seen         *Nonces
	requireAuth  bool
	unauthorized error
	now          func() time.Time
	streaming    bool
	// sharedStore, when set, replaces the process's ShareReplays store (tests).
	sharedStore *SharedNonces
}

func (v *verifier) shared() *SharedNonces {
	if v.sharedStore != nil {
		return v.sharedStore
	}
	return shared.Load()
}

func middleware(key []byte, seen *Nonces, requireAuth bool, unauthorized error, now func() time.Time) *verifier {
	return &verifier{key: key, seen: seen, requireAuth: requireAuth, unauthorized: unauthorized, now: now}
}

func (v *verifier) handle(c *fiber.Ctx) error {
	get := func(k string) string { return c.Get(k) }
	now := v.now()
	caller, err := Verify(v.key, get, c.Method(), string(c.Context().Host()), c.OriginalURL(), now)
	if err != nil || (v.requireAuth && !caller.Authenticated()) {
		return v.unauthorized
	}
	// A body read whole (trailer included) is checked before its nonce is claimed, so a copy
	// with another body cannot use up the nonce of the request it was copied from. A streamed
	// body is checked by Body, at its end.
	if !v.streaming && CheckBody(v.key, get, c.Body()) != nil {
		return v.unauthorized
	}
	secs, _ := strconv.ParseInt(get(HeaderTimestamp), 10, 64) // Verify parsed it
	signed := time.Unix(secs, 0)
	switch err := v.seen.Claim(get(HeaderNonce), signed, now); {
	case errors.Is(err, ErrNoncesFull):
		return Unavailable
	case err != nil:
		return v.unauthorized
	}
	if s := v.shared(); s != nil && needsSharedClaim(c.Method(), c.Path()) {
		switch err := s.Claim(c.UserContext(), get(HeaderNonce), signed); {
		case errors.Is(err, ErrReplay):
			return v.unauthorized
		case err != nil:
			return Unavailable
		}
	}
	c.Locals(localsKey, caller)
	return c.Next()
}

// From returns the caller stored by Middleware.
func From(c *fiber.Ctx) Caller {
	caller, _ := c.Locals(localsKey).(Caller)
	return caller
}
