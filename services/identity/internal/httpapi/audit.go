package httpapi

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/identity/internal/audit"
	"tori.dev/services/identity/internal/auth"
)

type actorJSON struct {
	Type    string  `json:"type"`
	UserID  *string `json:"userId"`
	Email   *string `json:"email"`
	TokenID *string `json:"tokenId"`
}

type auditEntryJSON struct {
	ID       string            `json:"id"`
	At       apitime.Time      `json:"at"`
	Actor    actorJSON         `json:"actor"`
	Action   string            `json:"action"`
	Target   string            `json:"target"`
	App      *string           `json:"app"`
	IP       *string           `json:"ip"`
	Outcome  string            `json:"outcome"`
	Metadata map[string]string `json:"metadata"`
}

// orNull shows an unknown member as null rather than "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func auditEntryOf(e audit.Entry) auditEntryJSON {
	meta := e.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	return auditEntryJSON{
		ID: e.ID, At: apitime.Time(e.At),
		Actor:  actorJSON{Type: e.ActorType, UserID: orNull(e.UserID), Email: orNull(e.Email), TokenID: orNull(e.TokenID)},
		Action: e.Action, Target: e.Target, App: orNull(e.App), IP: orNull(e.IP), Outcome: e.Outcome, Metadata: meta,
	}
}

// auditLog is GET /api/teams/{team}/audit: newest first, a page at a time.
func (h handlers) auditLog(c *fiber.Ctx) error {
	q, err := auditQuery(c)
	if err != nil {
		return err
	}
	entries, next, err := h.svc.AuditLog(c.UserContext(), q)
	if err != nil {
		return err
	}
	out := struct {
		Entries    []auditEntryJSON `json:"entries"`
		NextCursor *string          `json:"nextCursor"`
	}{Entries: make([]auditEntryJSON, 0, len(entries)), NextCursor: orNull(next)}
	for _, e := range entries {
		out.Entries = append(out.Entries, auditEntryOf(e))
	}
	return c.JSON(out)
}

func auditQuery(c *fiber.Ctx) (audit.Query, error) {
	q := audit.Query{TeamID: accessgate.Team(c), Action: c.Query("action"), Actor: c.Query("actor"), App: c.Query("app")}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"start", &q.Start}, {"end", &q.End}} {
		if v := c.Query(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return q, &auth.ParameterError{Field: p.name, Reason: "must be an RFC 3339 time"}
			}
			*p.to = t.UTC()
		}
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > audit.MaxLimit {
			return q, &auth.ParameterError{Field: "limit", Reason: "must be 1 to 200"}
		}
		q.Limit = n
	}
	if v := c.Query("cursor"); v != "" {
		cur, err := audit.ParseCursor(v)
		if err != nil {
			return q, &auth.ParameterError{Field: "cursor", Reason: "is not a cursor this API gave"}
		}
		q.After = &cur
	}
	return q, nil
}
