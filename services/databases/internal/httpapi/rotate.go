package httpapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
)

// rotate serves POST /api/apps/{slug}/database/credentials/rotate: 202 with the database
// (never a credential); the zone makes the new password and the apps service rewrites
// DATABASE_URL, while the old password works until the next deploy is live or 24 hours.
func (h *databaseHandler) rotate(c *fiber.Ctx) error {
	d, err := h.dbs.RotateCredentials(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(toJSON(d))
}
