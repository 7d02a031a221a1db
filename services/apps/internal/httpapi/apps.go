package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/usecase"
)

func (h handlers) createApp(c *fiber.Ctx) error {
	body, err := object(c.Body(), true)
	if err != nil {
		return err
	}
	var req usecase.CreateRequest
	var ok bool
	if req.Name, ok = optString(body, "name"); !ok {
		return apps.ErrInvalidSlug
	}
	if req.Region, ok = optString(body, "region"); !ok {
		return apps.ErrInvalidRegion
	}
	// Any kind but the string "service", of any JSON type, makes a static app.
	if k, ok := optString(body, "kind"); ok && k != nil {
		req.Kind = *k
	}
	a, err := h.Apps.Create(c.UserContext(), account(c), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toAppJSON(a, h.AppsDomain))
}

func (h handlers) listApps(c *fiber.Ctx) error {
	list, err := h.Apps.List(c.UserContext(), account(c))
	if err != nil {
		return err
	}
	out := make([]appJSON, 0, len(list))
	for _, a := range list {
		out = append(out, toAppJSON(a, h.AppsDomain))
	}
	return c.JSON(out)
}

func (h handlers) getApp(c *fiber.Ctx) error {
	a, err := h.Apps.Get(c.UserContext(), account(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(toAppJSON(a, h.AppsDomain))
}

func (h handlers) deleteApp(c *fiber.Ctx) error {
	d, err := h.Apps.Delete(c.UserContext(), account(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(deleteJSON{OK: true, Reclaimed: d.Reclaimed})
}
