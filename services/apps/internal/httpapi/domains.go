package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/services/apps/internal/domains"
)

func (h handlers) addDomain(c *fiber.Ctx) error {
	// The app first: an unknown, foreign or deleted app is 404 whatever the body says.
	if _, err := h.Apps.Get(c.UserContext(), owner(c), c.Params("slug")); err != nil {
		return err
	}
	body, err := object(c.Body(), false)
	if err != nil {
		return err
	}
	host, ok := optString(body, "hostname")
	if !ok || host == nil {
		return domains.ErrInvalidHostname
	}
	d, err := h.Domains.Add(c.UserContext(), owner(c), c.Params("slug"), *host)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toDomainJSON(d))
}

func (h handlers) listDomains(c *fiber.Ctx) error {
	list, err := h.Domains.List(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	out := make([]domainJSON, 0, len(list))
	for _, d := range list {
		out = append(out, toDomainJSON(d))
	}
	return c.JSON(out)
}

func (h handlers) removeDomain(c *fiber.Ctx) error {
	if err := h.Domains.Remove(c.UserContext(), owner(c), c.Params("slug"), c.Params("hostname")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
