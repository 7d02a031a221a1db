package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// scopeJSON is what a scoped token may do. A full token shows none of it, so its answers keep
// exactly the seed's fields for a person who never makes a scoped token.
type scopeJSON struct {
	Team      *string       `json:"team,omitempty"`
	Scopes    []string      `json:"scopes,omitempty"`
	Apps      *[]string     `json:"apps,omitempty"`
	ExpiresAt *apitime.Time `json:"expiresAt,omitempty"`
}

// scopeOf shows a scoped token's scope as the one-element list of its broadest scope (the
// scopes nest, so it is the whole of what the token may do).
func scopeOf(t auth.APIToken) scopeJSON {
	if !t.Scoped() {
		return scopeJSON{}
	}
	team := t.TeamSlug
	apps := t.Apps
	if apps == nil {
		apps = []string{}
	}
	return scopeJSON{Team: &team, Scopes: []string{t.Scope}, Apps: &apps, ExpiresAt: apitime.OrNull(t.ExpiresAt)}
}

type tokenJSON struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Prefix     string        `json:"prefix"`
	CreatedAt  apitime.Time  `json:"createdAt"`
	LastUsedAt *apitime.Time `json:"lastUsedAt"`
	scopeJSON
}

func tokenOf(t auth.APIToken) tokenJSON {
	return tokenJSON{t.ID, t.Name, t.Prefix, apitime.Time(t.CreatedAt), apitime.OrNull(t.LastUsedAt), scopeOf(t)}
}

func (h handlers) listTokens(c *fiber.Ctx) error {
	ts, err := h.svc.ListTokens(c.UserContext(), callerid.From(c))
	if err != nil {
		return err
	}
	out := make([]tokenJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, tokenOf(t))
	}
	return c.JSON(out)
}

// createToken mints a full token for `{name}` alone and a scoped one when the body names a
// team, scopes, apps or an end.
func (h handlers) createToken(c *fiber.Ctx) error {
	var req struct {
		Name      string   `json:"name"`
		Team      *string  `json:"team"`
		Scopes    []string `json:"scopes"`
		Apps      []string `json:"apps"`
		ExpiresIn *int64   `json:"expiresIn"`
		ExpiresAt *string  `json:"expiresAt"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	ctx, caller := c.UserContext(), callerid.From(c)
	var t auth.APIToken
	var secret string
	var err error
	if req.Team == nil && req.Scopes == nil && req.Apps == nil && req.ExpiresIn == nil && req.ExpiresAt == nil {
		t, secret, err = h.svc.CreateToken(ctx, caller, req.Name)
	} else {
		sr := usecase.ScopedTokenRequest{Name: req.Name, Scopes: req.Scopes, Apps: req.Apps, ExpiresIn: req.ExpiresIn}
		if req.Team != nil {
			sr.Team = *req.Team
		}
		if req.ExpiresAt != nil {
			at, perr := time.Parse(time.RFC3339Nano, *req.ExpiresAt)
			if perr != nil {
				return &auth.ParameterError{Field: "expiresAt", Reason: "must be an RFC 3339 time"}
			}
			sr.ExpiresAt = &at
		}
		t, secret, err = h.svc.CreateScopedToken(ctx, caller, sr)
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(struct {
		ID        string       `json:"id"`
		Name      string       `json:"name"`
		Prefix    string       `json:"prefix"`
		CreatedAt apitime.Time `json:"createdAt"`
		Token     string       `json:"token"`
		scopeJSON
	}{t.ID, t.Name, t.Prefix, apitime.Time(t.CreatedAt), secret, scopeOf(t)})
}

func (h handlers) revokeToken(c *fiber.Ctx) error {
	if err := h.svc.RevokeToken(c.UserContext(), callerid.From(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
