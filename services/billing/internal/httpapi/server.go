// Package httpapi is billing's HTTP face: the public plan catalog and the caller's billing,
// reached through the gateway, which signs who the caller is.
package httpapi

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/billing/internal/usecase"
)

// Billing is what the handlers need from the use cases; *usecase.Service is one.
type Billing interface {
	State(ctx context.Context, accountID uuid.UUID) (usecase.State, error)
	Sync(ctx context.Context, accountID uuid.UUID) (usecase.State, error)
	Checkout(ctx context.Context, accountID uuid.UUID, plan, interval string) (url string, err error)
	Portal(ctx context.Context, accountID uuid.UUID) (url string, err error)
	ApplyWebhook(ctx context.Context, payload []byte, signature string) error
}

// Deps are the handlers' collaborators.
type Deps struct {
	Billing    Billing
	SigningKey []byte // GATEWAY_SIGNING_KEY: only requests the gateway signed are served
	// DB begins the transaction of an audit entry with no change to ride with (a refusal).
	DB     pgstore.Beginner
	Health health.Identity
	Log    *slog.Logger
}

// bodyLimit bounds request bodies: billing's largest is a provider's webhook event (an
// invoice with its lines is tens of KiB).
const bodyLimit = 512 << 10

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	f := httpserver.New(httpserver.Options{
		Name: "billing", Log: d.Log, BodyLimit: bodyLimit, Health: &d.Health,
		Translate: toHTTP,
	})
	h := handlers{billing: d.Billing}
	// The catalog is public, yet it still must come through the gateway (a signed, empty
	// caller); every other route needs a signed, authenticated caller.
	public := callerid.Middleware(d.SigningKey, false, httperror.Unauthorized)
	authed := callerid.Middleware(d.SigningKey, true, httperror.Unauthorized)
	f.Get("/api/plans", public, h.plans)
	// A team's billing is its owners' (contract/access): the gate finds the team (`?team=` or
	// the body's team, else the caller's personal team), refuses anyone else, and records
	// each change's audit entry in the change's transaction.
	gate := accessgate.New(nil, accessgate.Publisher("billing"), d.DB, d.Log).Check
	f.Get("/api/billing", authed, gate, h.state)
	f.Post("/api/billing/checkout", authed, gate, h.checkout)
	f.Post("/api/billing/portal", authed, gate, h.portal)
	f.Post("/api/billing/sync", authed, gate, h.sync)
	// The provider calls the webhook with no token: the gateway forwards it signed for an
	// empty caller, and the provider's own signature over the raw body is what is trusted.
	f.Post("/api/billing/webhook", public, h.webhook)
	return f
}

type handlers struct {
	billing Billing
}
