package httpapi

import (
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// errBadBody means a request body is not the JSON object the route expects.
var errBadBody = errors.New("httpapi: malformed JSON body")

func (h handlers) plans(c *fiber.Ctx) error {
	return c.JSON(toPlansView(catalog.BillingTerms(), catalog.All()))
}

func (h handlers) state(c *fiber.Ctx) error {
	id, err := callerAccount(c)
	if err != nil {
		return err
	}
	s, err := h.billing.State(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(toBillingView(s))
}

func (h handlers) sync(c *fiber.Ctx) error {
	id, err := callerAccount(c)
	if err != nil {
		return err
	}
	s, err := h.billing.Sync(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(toBillingView(s))
}

type checkoutRequest struct {
	Plan     string `json:"plan"`
	Interval string `json:"interval"`
}

func (h handlers) checkout(c *fiber.Ctx) error {
	id, err := callerAccount(c)
	if err != nil {
		return err
	}
	var req checkoutRequest
	if err := json.Unmarshal(c.Body(), &req); err != nil {
		return errBadBody
	}
	url, err := h.billing.Checkout(c.UserContext(), id, req.Plan, req.Interval)
	if err != nil {
		return err
	}
	return c.JSON(urlView{URL: url})
}

func (h handlers) portal(c *fiber.Ctx) error {
	id, err := callerAccount(c)
	if err != nil {
		return err
	}
	url, err := h.billing.Portal(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(urlView{URL: url})
}

// urlView is the answer of checkout and the portal: the provider's page to open.
type urlView struct {
	URL string `json:"url"`
}

// callerAccount is the team whose billing the request is about, as the gate located it (a
// personal team's id is its account's, billing's account id).
func callerAccount(c *fiber.Ctx) (uuid.UUID, error) {
	return accounts.ParseID(accessgate.Team(c))
}

// signatureHeader is the header Stripe signs its webhook deliveries in.
const signatureHeader = "Stripe-Signature"

// webhook hands the body to the use case exactly as it arrived: the signature is over those
// bytes, so nothing may decode or re-encode them first.
func (h handlers) webhook(c *fiber.Ctx) error {
	if err := h.billing.ApplyWebhook(c.UserContext(), c.Request().Body(), c.Get(signatureHeader)); err != nil {
		return err
	}
	return c.JSON(receivedView{Received: true})
}

// receivedView acknowledges a webhook delivery.
type receivedView struct {
	Received bool `json:"received"`
}
