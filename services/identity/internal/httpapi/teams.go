package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/access"
	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/team"
)

// teamRoutes mounts the teams, members and invitations routes, each behind the access gate
// (contract/access's table: the team's slug in the path, the least role and scope).
func teamRoutes(a *fiber.App, private fiber.Handler, gate *accessgate.Gate, h handlers) {
	check := gate.Check
	a.Get("/api/teams", private, check, h.listTeams)
	a.Post("/api/teams", private, check, h.createTeam)
	a.Get("/api/teams/:team", private, check, h.getTeam)
	a.Patch("/api/teams/:team", private, check, h.renameTeam)
	a.Delete("/api/teams/:team", private, check, h.deleteTeam)
	a.Get("/api/teams/:team/members", private, check, h.listMembers)
	a.Patch("/api/teams/:team/members/:userId", private, check, h.changeRole)
	a.Delete("/api/teams/:team/members/:userId", private, check, h.removeMember)
	a.Get("/api/teams/:team/invitations", private, check, h.listInvitations)
	a.Post("/api/teams/:team/invitations", private, check, h.invite)
	a.Delete("/api/teams/:team/invitations/:id", private, check, h.revokeInvitation)
	a.Post("/api/invitations/accept", private, check, h.acceptInvitation)
}

type teamJSON struct {
	ID        string       `json:"id"`
	Slug      string       `json:"slug"`
	Name      string       `json:"name"`
	Plan      string       `json:"plan"`
	Personal  bool         `json:"personal"`
	Role      string       `json:"role"`
	CreatedAt apitime.Time `json:"createdAt"`
}

func toTeamJSON(v team.View) teamJSON {
	return teamJSON{v.ID, v.Slug, v.Name, v.Plan, v.Personal, v.Role.String(), apitime.Time(v.CreatedAt)}
}

type memberJSON struct {
	UserID   string       `json:"userId"`
	Email    string       `json:"email"`
	Name     string       `json:"name"`
	Role     string       `json:"role"`
	JoinedAt apitime.Time `json:"joinedAt"`
}

func toMemberJSON(m team.Member) memberJSON {
	return memberJSON{m.UserID, m.Email, m.Name, m.Role.String(), apitime.Time(m.CreatedAt)}
}

type invitationJSON struct {
	ID        string       `json:"id"`
	Email     string       `json:"email"`
	Role      string       `json:"role"`
	CreatedAt apitime.Time `json:"createdAt"`
	ExpiresAt apitime.Time `json:"expiresAt"`
	InvitedBy string       `json:"invitedBy"`
}

func toInvitationJSON(i team.Invitation) invitationJSON {
	return invitationJSON{i.ID, i.Email, i.Role.String(), apitime.Time(i.CreatedAt), apitime.Time(i.ExpiresAt), i.InvitedBy}
}

// createdInvitationJSON is POST .../invitations' answer: the invitation without its inviter,
// who is the caller.
type createdInvitationJSON struct {
	ID        string       `json:"id"`
	Email     string       `json:"email"`
	Role      string       `json:"role"`
	CreatedAt apitime.Time `json:"createdAt"`
	ExpiresAt apitime.Time `json:"expiresAt"`
}

func (h handlers) listTeams(c *fiber.Ctx) error {
	vs, err := h.svc.ListTeams(c.UserContext(), callerid.From(c))
	if err != nil {
		return err
	}
	out := make([]teamJSON, 0, len(vs))
	for _, v := range vs {
		out = append(out, toTeamJSON(v))
	}
	return c.JSON(out)
}

func (h handlers) createTeam(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
		Slug string `json:"slug"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	v, err := h.svc.CreateTeam(c.UserContext(), callerid.From(c), req.Name, req.Slug)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toTeamJSON(v))
}

func (h handlers) getTeam(c *fiber.Ctx) error {
	v, err := h.svc.GetTeam(c.UserContext(), callerid.From(c), accessgate.Team(c))
	if err != nil {
		return err
	}
	return c.JSON(toTeamJSON(v))
}

func (h handlers) renameTeam(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	v, err := h.svc.RenameTeam(c.UserContext(), callerid.From(c), accessgate.Team(c), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(toTeamJSON(v))
}

func (h handlers) deleteTeam(c *fiber.Ctx) error {
	if err := h.svc.DeleteTeam(c.UserContext(), callerid.From(c), accessgate.Team(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h handlers) listMembers(c *fiber.Ctx) error {
	ms, err := h.svc.ListMembers(c.UserContext(), accessgate.Team(c))
	if err != nil {
		return err
	}
	out := make([]memberJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, toMemberJSON(m))
	}
	return c.JSON(out)
}

func (h handlers) changeRole(c *fiber.Ctx) error {
	var req struct {
		Role string `json:"role"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	if r, ok := access.ParseRole(req.Role); ok {
		accessgate.Annotate(c.UserContext(), "role", r.String())
	}
	m, err := h.svc.ChangeRole(c.UserContext(), callerid.From(c), accessgate.Team(c), c.Params("userId"), req.Role)
	if err != nil {
		return err
	}
	return c.JSON(toMemberJSON(m))
}

func (h handlers) removeMember(c *fiber.Ctx) error {
	caller := callerid.From(c)
	if c.Params("userId") == caller.UserID {
		accessgate.Annotate(c.UserContext(), "left", "true")
	}
	if err := h.svc.RemoveMember(c.UserContext(), caller, accessgate.Team(c), c.Params("userId")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h handlers) listInvitations(c *fiber.Ctx) error {
	is, err := h.svc.ListInvitations(c.UserContext(), accessgate.Team(c))
	if err != nil {
		return err
	}
	out := make([]invitationJSON, 0, len(is))
	for _, i := range is {
		out = append(out, toInvitationJSON(i))
	}
	return c.JSON(out)
}

func (h handlers) invite(c *fiber.Ctx) error {
	var req struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	// The entry names whom and as what (never the link's code).
	if email, err := account.ParseEmail(req.Email); err == nil {
		accessgate.Annotate(c.UserContext(), "email", email)
	}
	if r, ok := access.ParseRole(req.Role); ok {
		accessgate.Annotate(c.UserContext(), "role", r.String())
	}
	inv, err := h.svc.Invite(c.UserContext(), callerid.From(c), accessgate.Team(c), req.Email, req.Role)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(createdInvitationJSON{inv.ID, inv.Email, inv.Role.String(),
		apitime.Time(inv.CreatedAt), apitime.Time(inv.ExpiresAt)})
}

func (h handlers) revokeInvitation(c *fiber.Ctx) error {
	if err := h.svc.RevokeInvitation(c.UserContext(), callerid.From(c), accessgate.Team(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h handlers) acceptInvitation(c *fiber.Ctx) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	v, err := h.svc.AcceptInvitation(c.UserContext(), callerid.From(c), req.Token)
	if err != nil {
		return err
	}
	return c.JSON(toTeamJSON(v))
}
