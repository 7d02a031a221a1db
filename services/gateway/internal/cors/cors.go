// Package cors lets exactly the configured browser origins call the API with credentials.
//
// It is written here rather than taken from Fiber's middleware because the rules are few and
// strict: the allow headers name the one origin that asked and appear for listed origins only,
// never as a wildcard, and the gateway is the only place they come from (the proxy drops any a
// service sends).
package cors

import (
	"github.com/gofiber/fiber/v2"
)

const (
	allowMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
	// Authorization, Content-Type and Idempotency-Key (on every POST) are what the console
	// sends; the trace headers let a browser join its own trace.
	allowHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, traceparent, tracestate"
	// Retry-After is not a CORS-safelisted response header; a browser client needs it on 429s.
	exposeHeaders = "Retry-After"
	maxAge        = "600"
)

// Policy is the set of allowed origins.
type Policy struct {
	origins map[string]struct{}
}

// New allows exactly the given origins (scheme://host[:port], as browsers send Origin).
func New(origins []string) *Policy {
	p := &Policy{origins: make(map[string]struct{}, len(origins))}
	for _, o := range origins {
		if o != "*" { // a wildcard with credentials is never valid; refuse to express it
			p.origins[o] = struct{}{}
		}
	}
	return p
}

// Allowed reports whether origin may call the API.
func (p *Policy) Allowed(origin string) bool {
	_, ok := p.origins[origin]
	return ok
}

// Handler is Serve as Fiber middleware.
func (p *Policy) Handler(c *fiber.Ctx) error { return p.Serve(c, c.Next) }

// Serve answers preflights itself; any other request goes to next, and its response, error
// or not, is given the headers its origin is due.
func (p *Policy) Serve(c *fiber.Ctx, next func() error) error {
	origin := c.Get(fiber.HeaderOrigin)
	allowed := origin != "" && p.Allowed(origin)

	if c.Method() == fiber.MethodOptions && origin != "" && c.Get(fiber.HeaderAccessControlRequestMethod) != "" {
		// A preflight carries no credentials, so it is answered before authentication. A
		// foreign origin gets the same 204 without any allow header: the browser then
		// refuses the real request, and the answer does not reveal the list.
		c.Vary(fiber.HeaderOrigin, fiber.HeaderAccessControlRequestMethod, fiber.HeaderAccessControlRequestHeaders)
		if allowed {
			h := &c.Response().Header
			h.Set(fiber.HeaderAccessControlAllowOrigin, origin)
			h.Set(fiber.HeaderAccessControlAllowCredentials, "true")
			h.Set(fiber.HeaderAccessControlAllowMethods, allowMethods)
			h.Set(fiber.HeaderAccessControlAllowHeaders, allowHeaders)
			h.Set(fiber.HeaderAccessControlMaxAge, maxAge)
		}
		return c.SendStatus(fiber.StatusNoContent)
	}

	err := next()
	// The answer differs by Origin, so caches must key on it, whoever asked.
	c.Vary(fiber.HeaderOrigin)
	h := &c.Response().Header
	if allowed {
		h.Set(fiber.HeaderAccessControlAllowOrigin, origin)
		h.Set(fiber.HeaderAccessControlAllowCredentials, "true")
		h.Set(fiber.HeaderAccessControlExposeHeaders, exposeHeaders)
	} else {
		for _, k := range []string{
			fiber.HeaderAccessControlAllowOrigin, fiber.HeaderAccessControlAllowCredentials,
			fiber.HeaderAccessControlExposeHeaders,
		} {
			h.Del(k)
		}
	}
	return err
}
