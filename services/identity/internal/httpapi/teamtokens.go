package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
)

// teamTokenJSON is a team's token as its admins see it: whose it is, never the secret.
type teamTokenJSON struct {
	tokenJSON
	UserID string `json:"userId"`
	Email  string `json:"email"`
}

func (h handlers) teamTokens(c *fiber.Ctx) error {
	ts, err := h.svc.TeamTokens(c.UserContext(), accessgate.Team(c))
	if err != nil {
		return err
	}
	out := make([]teamTokenJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, teamTokenJSON{tokenOf(t.APIToken), t.UserID, t.Email})
	}
	return c.JSON(out)
}

func (h handlers) revokeTeamToken(c *fiber.Ctx) error {
	if err := h.svc.RevokeTeamToken(c.UserContext(), accessgate.Team(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
