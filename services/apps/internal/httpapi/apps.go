package httpapi

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/usecase"
)

func (h handlers) createApp(c *fiber.Ctx) error {
	body, err := object(c.Body(), true)
	if err != nil {
		return err
	}
	if err := sameTeam(c, body); err != nil {
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
	team := owner(c)
	a, err := h.Apps.Create(c.UserContext(), team, req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toAppJSON(a, h.AppsDomain, teamSlug(c, team)))
}

// sameTeam holds the body's `team` to the team the gate located (from the query, else the
// body when it is JSON): a body the gate could not read (no JSON content type) must not
// create the app in the caller's personal team while naming another.
func sameTeam(c *fiber.Ctx, body map[string]json.RawMessage) error {
	named, ok := optString(body, "team")
	switch {
	case !ok:
		return errInvalidTeam
	case named == nil || *named == "":
		return nil
	}
	m, member := callerid.From(c).Principal().TeamBySlug(*named)
	if !member {
		return errNoSuchTeam
	}
	if m.TeamID != owner(c) {
		return errInvalidTeam // the query named another team
	}
	return nil
}

func (h handlers) listApps(c *fiber.Ctx) error {
	p := callerid.From(c).Principal()
	var teams []string
	if slug := c.Query("team"); slug != "" {
		m, ok := p.TeamBySlug(slug)
		if !ok {
			return errNoSuchTeam
		}
		teams = []string{m.TeamID}
	} else {
		teams = p.TeamIDs()
	}
	list, err := h.Apps.List(c.UserContext(), teams, p.Apps)
	if err != nil {
		return err
	}
	out := make([]appJSON, 0, len(list))
	for _, a := range list {
		out = append(out, toAppJSON(a, h.AppsDomain, teamSlug(c, a.AccountID)))
	}
	return c.JSON(out)
}

func (h handlers) getApp(c *fiber.Ctx) error {
	a, err := h.Apps.Get(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(toAppJSON(a, h.AppsDomain, teamSlug(c, a.AccountID)))
}

func (h handlers) deleteApp(c *fiber.Ctx) error {
	d, err := h.Apps.Delete(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(deleteJSON{OK: true, Reclaimed: d.Reclaimed})
}
