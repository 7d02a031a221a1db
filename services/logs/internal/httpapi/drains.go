package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
)

type drainsHandler struct {
	svc *drains.Service
}

// drainJSON is the contract's Drain.
type drainJSON struct {
	ID             string        `json:"id"`
	URL            string        `json:"url"`
	Kind           drains.Kind   `json:"kind"`
	Status         drains.Status `json:"status"`
	CreatedAt      apitime.Time  `json:"createdAt"`
	LastDeliveryAt *apitime.Time `json:"lastDeliveryAt"`
	LastError      *string       `json:"lastError"`
	Dropped24h     int64         `json:"dropped24h"`
	Delivered24h   int64         `json:"delivered24h"`
	// Secret is in the create's answer only (HTTPS drains).
	Secret string `json:"secret,omitempty"`
}

func toDrainJSON(d drains.Drain) drainJSON {
	return drainJSON{
		ID: d.ID, URL: drains.Masked(d.URL), Kind: d.Kind, Status: d.Status,
		CreatedAt: apitime.Time(d.CreatedAt), LastDeliveryAt: apitime.OrNull(d.LastDeliveryAt),
		LastError: d.LastError, Dropped24h: d.Dropped24h, Delivered24h: d.Delivered24h,
	}
}

// create serves POST /api/apps/{slug}/drains {"url"}.
func (h *drainsHandler) create(c *fiber.Ctx) error {
	var body struct {
		URL *string `json:"url"`
	}
	if err := json.Unmarshal(c.Body(), &body); err != nil || body.URL == nil {
		// The app is checked first, as on every route that names one.
		if _, err := h.svc.List(c.UserContext(), accessgate.Team(c), c.Params("slug")); err != nil {
			return toHTTP(err)
		}
		return toHTTP(&logs.InvalidParameterError{Name: "url", Reason: "is required (a JSON body {\"url\": \"https://…\"})"})
	}
	id := uuid.NewString()
	accessgate.SetTarget(c.UserContext(), id)
	d, err := h.svc.Create(c.UserContext(), accessgate.Team(c), c.Params("slug"), *body.URL, id)
	if err != nil {
		return toHTTP(err)
	}
	out := toDrainJSON(d)
	out.Secret = d.Secret
	return c.Status(http.StatusCreated).JSON(out)
}

// list serves GET /api/apps/{slug}/drains.
func (h *drainsHandler) list(c *fiber.Ctx) error {
	ds, err := h.svc.List(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	out := make([]drainJSON, 0, len(ds))
	for _, d := range ds {
		out = append(out, toDrainJSON(d))
	}
	return c.JSON(out)
}

// get serves GET /api/apps/{slug}/drains/{id}.
func (h *drainsHandler) get(c *fiber.Ctx) error {
	d, err := h.svc.Get(c.UserContext(), accessgate.Team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(toDrainJSON(d))
}

// remove serves DELETE /api/apps/{slug}/drains/{id}.
func (h *drainsHandler) remove(c *fiber.Ctx) error {
	if err := h.svc.Delete(c.UserContext(), accessgate.Team(c), c.Params("slug"), c.Params("id")); err != nil {
		return toHTTP(err)
	}
	return c.SendStatus(http.StatusNoContent)
}

// test serves POST /api/apps/{slug}/drains/{id}/test: one line, sent now.
func (h *drainsHandler) test(c *fiber.Ctx) error {
	ctx, cancel := contextWithTimeout(c, drains.DeliveryTimeout+5*time.Second)
	defer cancel()
	r, err := h.svc.Test(ctx, accessgate.Team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return toHTTP(err)
	}
	out := fiber.Map{"delivered": r.Delivered}
	if r.Status != 0 {
		out["status"] = r.Status
	}
	if !r.Delivered {
		out["error"] = r.Error
	}
	return c.JSON(out)
}
