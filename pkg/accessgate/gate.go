// Package accessgate enforces contract/access's table in a service: it finds the team a
// request acts in, refuses what the caller's role or token may not do (recording the refusal
// in the team's audit log), and gives the request's change an audit entry that commits in
// the change's own transaction (pgstore.WithPending).
package accessgate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/access"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/pgstore"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
)

// AppTeams finds the team that owns an app, in the service's own copy of apps. teams are the
// caller's: a service whose copy has not heard of an app yet (its event still on the way)
// may ask the apps service for it on behalf of those teams only. found is false for an app
// that does not exist (or is deleted).
type AppTeams func(ctx context.Context, teams []string, slug string) (teamID string, found bool, err error)

// Writer writes an audit entry inside tx: to the outbox (Publisher), or for identity, which
// keeps the log, straight into it.
type Writer func(ctx context.Context, tx pgx.Tx, e *auditv1.EntryRecorded) error

// Publisher is the Writer of a service that publishes its entries for identity to record.
func Publisher(service string) Writer {
	key := auditbus.Key(service)
	return func(ctx context.Context, tx pgx.Tx, e *auditv1.EntryRecorded) error {
		return bus.Publish(ctx, tx, key, e)
	}
}

// Gate checks requests against the access table.
type Gate struct {
	apps  AppTeams
	write Writer
	db    pgstore.Beginner
	log   *slog.Logger
}

// New makes a gate: apps finds an app's team (nil for a service without app routes), write
// records entries, db begins the transaction of an entry that has no change to ride with (a
// refusal).
func New(apps AppTeams, write Writer, db pgstore.Beginner, log *slog.Logger) *Gate {
	return &Gate{apps: apps, write: write, db: db, log: log}
}

const (
	localsTeam  = "accessgate.team"
	localsRoute = "accessgate.route"
)

// Team is the team the gate located for the request ("" for a Personal or MemberTeams route):
// the owner id a use case checks objects against (a personal team's id is its account's).
func Team(c *fiber.Ctx) string {
	t, _ := c.Locals(localsTeam).(string)
	return t
}

// Principal is the caller's access, as the gate read it.
func Principal(c *fiber.Ctx) access.Principal { return callerid.From(c).Principal() }

// ErrUnlisted refuses a route the access table does not list: a new route cannot ship
// unguarded.
var ErrUnlisted = errors.New("accessgate: route not in the access table")

// Check is the route-level handler placed before each authenticated route's handler (it
// reads c.Route(), which is the matched route only there).
func (g *Gate) Check(c *fiber.Ctx) error {
	route, ok := access.Find(c.Method(), c.Route().Path)
	if !ok {
		g.log.ErrorContext(c.UserContext(), "route missing from the access table", "method", c.Method(), "route", c.Route().Path)
		return httperror.NotFound
	}
	caller := callerid.From(c)
	p := caller.Principal()
	teamID, app, err := g.locate(c, route, p)
	if err != nil {
		return err
	}
	switch err := access.Decide(p, route, teamID, app); {
	case errors.Is(err, access.ErrNotFound):
		return httperror.NotFound
	case err != nil:
		var d *access.Denied
		errors.As(err, &d)
		g.recordDenied(c.UserContext(), newEntry(caller, route, teamID, app, c.Path()), p, d)
		return deniedError(d)
	}
	c.Locals(localsTeam, teamID)
	if !route.Changes() || teamID == "" {
		return c.Next() // a read, or a change in no team's log (a person's own routes)
	}
	entry := newEntry(caller, route, teamID, app, c.Path())
	ctx, pending := pgstore.WithPending(withEntry(c.UserContext(), entry), func(ctx context.Context, tx pgx.Tx) error {
		entry.At = timestamppb.Now()
		return g.write(ctx, tx, entry)
	})
	c.SetUserContext(ctx)
	if err := c.Next(); err != nil {
		return err
	}
	if s := c.Response().StatusCode(); s < 300 && !pending.Done() {
		// The change committed without going through pgstore.InTx (or made no transaction):
		// the entry still goes in, as close after it as the service can.
		g.log.WarnContext(ctx, "audit entry written apart from its change", "action", route.Action)
		if err := pgstore.InTx(context.WithoutCancel(ctx), g.db, func(tx pgx.Tx) error { return nil }); err != nil {
			g.log.ErrorContext(ctx, "audit entry lost", "action", route.Action, "err", err.Error())
		}
	}
	return nil
}

func (g *Gate) locate(c *fiber.Ctx, r access.Route, p access.Principal) (teamID, app string, err error) {
	switch r.Locator {
	case access.AppPath:
		app = c.Params("slug")
		if g.apps == nil {
			return "", "", httperror.NotFound
		}
		t, found, err := g.apps(c.UserContext(), p.TeamIDs(), app)
		if err != nil {
			return "", "", err
		}
		if !found {
			return "", "", httperror.NotFound
		}
		return t, app, nil
	case access.TeamPath:
		m, ok := p.TeamBySlug(c.Params("team"))
		if !ok || c.Params("team") == "" {
			return "", "", httperror.NotFound
		}
		return m.TeamID, "", nil
	case access.TeamParam:
		m, ok := p.TeamBySlug(TeamParam(c))
		if !ok {
			return "", "", httperror.NotFound
		}
		return m.TeamID, "", nil
	}
	return "", "", nil
}

// TeamParam is the team a TeamParam route names: the `team` query parameter, else the JSON
// body's `team` member; "" for the caller's default team.
func TeamParam(c *fiber.Ctx) string {
	if t := c.Query("team"); t != "" {
		return t
	}
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) && len(c.Body()) > 0 {
		var body struct {
			Team string `json:"team"`
		}
		if json.Unmarshal(c.Body(), &body) == nil {
			return body.Team
		}
	}
	return ""
}

func (g *Gate) recordDenied(ctx context.Context, e *auditv1.EntryRecorded, p access.Principal, d *access.Denied) {
	if e.TeamId == "" && p.Scope != access.FullScope && len(p.Memberships) == 1 {
		e.TeamId = p.Memberships[0].TeamID
	}
	if e.TeamId == "" {
		return // no team's log to write to (a person refused on their own routes)
	}
	e.Outcome = auditbus.OutcomeDenied
	e.At = timestamppb.Now()
	e.Metadata["code"] = d.Code
	e.Metadata["required"] = d.Required
	if e.Action == "" {
		e.Action = "read"
	}
	err := pgstore.InTx(context.WithoutCancel(ctx), g.db, func(tx pgx.Tx) error { return g.write(ctx, tx, e) })
	if err != nil {
		g.log.ErrorContext(ctx, "audit entry of a refusal lost", "action", e.Action, "err", err.Error())
	}
}

func deniedError(d *access.Denied) *httperror.Error {
	he := httperror.New(http.StatusForbidden, d.Code)
	switch d.Code {
	case access.CodeInsufficientRole:
		he.Body.RequiredRole = d.Required
		he.Body.Message = "your role in this team is not enough; it takes " + d.Required
	case access.CodeInsufficientScope:
		he.Body.RequiredScope = d.Required
		he.Body.Message = "this token's scope is not enough; it takes " + d.Required
	}
	return he
}

func newEntry(c callerid.Caller, r access.Route, teamID, app, path string) *auditv1.EntryRecorded {
	e := &auditv1.EntryRecorded{
		EntryId:  uuid.NewString(),
		TeamId:   teamID,
		At:       timestamppb.New(time.Now()),
		UserId:   c.UserID,
		Action:   r.Action,
		Target:   strings.TrimPrefix(path, "/api/"),
		App:      app,
		Ip:       c.ClientIP,
		Outcome:  auditbus.OutcomeSuccess,
		Metadata: map[string]string{},
	}
	if c.TokenKind == callerid.KindAPI {
		e.ActorType = auditbus.ActorToken
		e.TokenId = c.TokenID
	} else {
		e.ActorType = auditbus.ActorUser
	}
	return e
}
