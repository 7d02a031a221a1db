package httpapi

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// contextWithTimeout is the request's context bounded by d.
func contextWithTimeout(c *fiber.Ctx, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.UserContext(), d)
}
