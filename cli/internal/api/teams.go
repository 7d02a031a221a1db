package api

import (
	"context"
	"net/url"
	"strconv"
)

// The shapes and calls of teams, their members, invitations, team tokens and the audit log
// (issue #39), owned by identity. Checked against the document by drift_test.go like every
// other shape.

// Team is a team the caller belongs to, with the caller's role in it. A person's personal
// team (Personal) carries their own plan and cannot be shared.
type Team struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	Name      string `json:"name"`
	Plan      string `json:"plan"`
	Personal  bool   `json:"personal"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
}

// TeamCreate leaves Slug out unless given: the API makes one from the name, as an app's.
type TeamCreate struct {
	Name string `json:"name"`
	Slug string `json:"slug,omitempty"`
}

// TeamUpdate renames a team; its slug never changes.
type TeamUpdate struct {
	Name string `json:"name"`
}

type Member struct {
	UserID   string `json:"userId"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	JoinedAt string `json:"joinedAt"`
}

type MemberUpdate struct {
	Role string `json:"role"`
}

type Invitation struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt"`
	InvitedBy string `json:"invitedBy"`
}

// CreatedInvitation is the answer to an invitation: what Invitation holds but who sent it.
type CreatedInvitation struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt"`
}

type InvitationCreate struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

type InvitationAccept struct {
	Token string `json:"token"`
}

// TeamToken is one of a team's tokens as its admins see it: never the secret.
type TeamToken struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	Apps       []string `json:"apps"`
	ExpiresAt  *string  `json:"expiresAt"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	UserID     string   `json:"userId"`
	Email      string   `json:"email"`
}

// AuditActor is who did it: a person (with a session or a full token), a scoped token, or
// the platform itself.
type AuditActor struct {
	Type    string  `json:"type"`
	UserID  *string `json:"userId"`
	Email   *string `json:"email"`
	TokenID *string `json:"tokenId"`
}

type AuditEntry struct {
	ID       string         `json:"id"`
	At       string         `json:"at"`
	Actor    AuditActor     `json:"actor"`
	Action   string         `json:"action"`
	Target   string         `json:"target"`
	App      *string        `json:"app"`
	IP       *string        `json:"ip"`
	Outcome  string         `json:"outcome"`
	Metadata map[string]any `json:"metadata"`
}

// AuditPage is one page of a team's audit log, newest first; NextCursor asks for the page
// after it (nil: none).
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor *string      `json:"nextCursor"`
}

// AuditQuery narrows the log; empty fields are left to the API (its default limit is 50).
type AuditQuery struct {
	Start, End, Action, Actor, App, Cursor string
	Limit                                  int
}

// TokenCreate asks for a scoped token: Scopes a non-empty subset of read, deploy, write and
// admin (the broadest counts), Apps the team's apps it is pinned to, and an expiry given
// either as seconds from now or as a time (neither: the API's 90 days).
type TokenCreate struct {
	Name      string   `json:"name"`
	Team      string   `json:"team"`
	Scopes    []string `json:"scopes"`
	Apps      []string `json:"apps,omitempty"`
	ExpiresIn int64    `json:"expiresIn,omitempty"`
	ExpiresAt string   `json:"expiresAt,omitempty"`
}

// CreatedToken is a new token with its secret, shown only in this answer.
type CreatedToken struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Prefix    string   `json:"prefix"`
	Token     string   `json:"token"`
	Team      *string  `json:"team"`
	Scopes    []string `json:"scopes"`
	Apps      []string `json:"apps"`
	ExpiresAt *string  `json:"expiresAt"`
	CreatedAt string   `json:"createdAt"`
}

var (
	OpListTeams        = &Operation{Method: "GET", Path: "/api/teams", Response: []Team{}}
	OpCreateTeam       = &Operation{Method: "POST", Path: "/api/teams", Request: TeamCreate{}, Response: Team{}}
	OpGetTeam          = &Operation{Method: "GET", Path: "/api/teams/{team}", Response: Team{}}
	OpRenameTeam       = &Operation{Method: "PATCH", Path: "/api/teams/{team}", Request: TeamUpdate{}, Response: Team{}}
	OpDeleteTeam       = &Operation{Method: "DELETE", Path: "/api/teams/{team}"}
	OpListMembers      = &Operation{Method: "GET", Path: "/api/teams/{team}/members", Response: []Member{}}
	OpSetMemberRole    = &Operation{Method: "PATCH", Path: "/api/teams/{team}/members/{userId}", Request: MemberUpdate{}, Response: Member{}}
	OpRemoveMember     = &Operation{Method: "DELETE", Path: "/api/teams/{team}/members/{userId}"}
	OpListInvitations  = &Operation{Method: "GET", Path: "/api/teams/{team}/invitations", Response: []Invitation{}}
	OpInvite           = &Operation{Method: "POST", Path: "/api/teams/{team}/invitations", Request: InvitationCreate{}, Response: CreatedInvitation{}}
	OpRevokeInvitation = &Operation{Method: "DELETE", Path: "/api/teams/{team}/invitations/{id}"}
	OpAcceptInvitation = &Operation{Method: "POST", Path: "/api/invitations/accept", Request: InvitationAccept{}, Response: Team{}}
	OpListTeamTokens   = &Operation{Method: "GET", Path: "/api/teams/{team}/tokens", Response: []TeamToken{}}
	OpRevokeTeamToken  = &Operation{Method: "DELETE", Path: "/api/teams/{team}/tokens/{id}"}
	OpAudit            = &Operation{Method: "GET", Path: "/api/teams/{team}/audit", Response: AuditPage{}, Query: []string{"start", "end", "action", "actor", "app", "limit", "cursor"}}
	OpCreateToken      = &Operation{Method: "POST", Path: "/api/tokens", Request: TokenCreate{}, Response: CreatedToken{}}
)

func (c *Client) ListTeams(ctx context.Context) ([]Team, Raw, error) {
	return call[[]Team](ctx, c, req{op: OpListTeams})
}

func (c *Client) CreateTeam(ctx context.Context, in TeamCreate) (Team, Raw, error) {
	return call[Team](ctx, c, req{op: OpCreateTeam, body: in})
}

func (c *Client) GetTeam(ctx context.Context, team string) (Team, Raw, error) {
	return call[Team](ctx, c, req{op: OpGetTeam, params: []string{team}})
}

func (c *Client) RenameTeam(ctx context.Context, team, name string) (Team, Raw, error) {
	return call[Team](ctx, c, req{op: OpRenameTeam, params: []string{team}, body: TeamUpdate{Name: name}})
}

func (c *Client) DeleteTeam(ctx context.Context, team string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpDeleteTeam, params: []string{team}})
	return err
}

func (c *Client) ListMembers(ctx context.Context, team string) ([]Member, Raw, error) {
	return call[[]Member](ctx, c, req{op: OpListMembers, params: []string{team}})
}

func (c *Client) SetMemberRole(ctx context.Context, team, userID, role string) (Member, Raw, error) {
	return call[Member](ctx, c, req{op: OpSetMemberRole, params: []string{team, userID}, body: MemberUpdate{Role: role}})
}

// RemoveMember removes userID from team; the caller's own id is leaving it.
func (c *Client) RemoveMember(ctx context.Context, team, userID string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpRemoveMember, params: []string{team, userID}})
	return err
}

func (c *Client) ListInvitations(ctx context.Context, team string) ([]Invitation, Raw, error) {
	return call[[]Invitation](ctx, c, req{op: OpListInvitations, params: []string{team}})
}

func (c *Client) Invite(ctx context.Context, team string, in InvitationCreate) (CreatedInvitation, Raw, error) {
	return call[CreatedInvitation](ctx, c, req{op: OpInvite, params: []string{team}, body: in})
}

func (c *Client) RevokeInvitation(ctx context.Context, team, id string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpRevokeInvitation, params: []string{team, id}})
	return err
}

// AcceptInvitation joins the team the invitation's code names; the API takes it from a
// sign-in session only.
func (c *Client) AcceptInvitation(ctx context.Context, token string) (Team, Raw, error) {
	return call[Team](ctx, c, req{op: OpAcceptInvitation, body: InvitationAccept{Token: token}})
}

func (c *Client) ListTeamTokens(ctx context.Context, team string) ([]TeamToken, Raw, error) {
	return call[[]TeamToken](ctx, c, req{op: OpListTeamTokens, params: []string{team}})
}

func (c *Client) RevokeTeamToken(ctx context.Context, team, id string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpRevokeTeamToken, params: []string{team, id}})
	return err
}

func (c *Client) Audit(ctx context.Context, team string, aq AuditQuery) (AuditPage, Raw, error) {
	q := url.Values{}
	for k, v := range map[string]string{"start": aq.Start, "end": aq.End, "action": aq.Action, "actor": aq.Actor, "app": aq.App, "cursor": aq.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if aq.Limit > 0 {
		q.Set("limit", strconv.Itoa(aq.Limit))
	}
	return call[AuditPage](ctx, c, req{op: OpAudit, params: []string{team}, query: q})
}

// CreateToken makes a scoped token, with a session or with a token that covers it.
func (c *Client) CreateToken(ctx context.Context, in TokenCreate) (CreatedToken, Raw, error) {
	return call[CreatedToken](ctx, c, req{op: OpCreateToken, body: in})
}

// teamQuery is ?team=SLUG, or nothing for "" (the API's default).
func teamQuery(team string) url.Values {
	if team == "" {
		return nil
	}
	return url.Values{"team": {team}}
}
