package access

import "strings"

// Locator says where a route finds the team it acts in.
type Locator int

const (
	// Personal: the caller's own things (sessions, their tokens, their account), in no team.
	Personal Locator = iota
	// AppPath: the app the path's {slug} names; the app's team.
	AppPath
	// TeamPath: the team the path's {team} names.
	TeamPath
	// TeamParam: the team named by the `team` query parameter or body member, else the
	// caller's personal team (POST /api/apps, /api/billing*).
	TeamParam
	// MemberTeams: every team the caller is a member of (GET /api/apps, GET /api/teams).
	MemberTeams
)

// Route is one authenticated operation of the public API and what it takes.
type Route struct {
	Method   string
	Template string // OpenAPI style: /api/apps/{slug}/env
	Role     Role   // the least role in the located team; NoRole for Personal routes
	Scope    Scope  // the least token scope
	Locator  Locator
	// Action names the operation in the audit log ("env.set"); reads have none.
	Action string
	// SessionOnly: an API token is refused (403 session_required) whatever its scope.
	SessionOnly bool
}

// Changes reports whether the route changes something, so its success and its refusals are
// audited.
func (r Route) Changes() bool { return r.Action != "" }

// table is the one table of who may do what. A route missing here is refused by every
// service that enforces it (see Find), so a new route cannot ship unguarded.
var table = []Route{
	// Personal routes: the person's own sign-in, tokens and settings.
	{Method: "POST", Template: "/api/auth/logout", Scope: Read, Locator: Personal},
	{Method: "POST", Template: "/api/auth/cli/approve", Scope: FullScope, Locator: Personal, SessionOnly: true},
	{Method: "POST", Template: "/api/auth/cli/deny", Scope: FullScope, Locator: Personal, SessionOnly: true},
	{Method: "POST", Template: "/api/auth/cli/authorize", Scope: FullScope, Locator: Personal, SessionOnly: true},
	{Method: "GET", Template: "/api/tokens", Scope: Read, Locator: Personal},
	{Method: "POST", Template: "/api/tokens", Scope: Read, Locator: Personal, Action: "token.create"},
	{Method: "DELETE", Template: "/api/tokens/{id}", Scope: Read, Locator: Personal, Action: "token.revoke"},
	{Method: "GET", Template: "/api/account", Scope: Read, Locator: Personal},
	{Method: "PATCH", Template: "/api/account", Scope: FullScope, Locator: Personal},
	{Method: "POST", Template: "/api/invitations/accept", Scope: FullScope, Locator: Personal, SessionOnly: true, Action: "member.join"},

	// Teams.
	{Method: "GET", Template: "/api/teams", Scope: Read, Locator: MemberTeams},
	{Method: "POST", Template: "/api/teams", Scope: FullScope, Locator: Personal, Action: "team.create"},
	{Method: "GET", Template: "/api/teams/{team}", Role: Viewer, Scope: Read, Locator: TeamPath},
	{Method: "PATCH", Template: "/api/teams/{team}", Role: Admin, Scope: AdminScope, Locator: TeamPath, Action: "team.update"},
	{Method: "DELETE", Template: "/api/teams/{team}", Role: Owner, Scope: AdminScope, Locator: TeamPath, Action: "team.delete"},
	{Method: "GET", Template: "/api/teams/{team}/members", Role: Viewer, Scope: Read, Locator: TeamPath},
	{Method: "PATCH", Template: "/api/teams/{team}/members/{userId}", Role: Admin, Scope: AdminScope, Locator: TeamPath, Action: "member.update"},
	// Any member may leave; removing someone else takes admin (owner to remove an owner),
	// which identity checks against the same roles.
	{Method: "DELETE", Template: "/api/teams/{team}/members/{userId}", Role: Viewer, Scope: AdminScope, Locator: TeamPath, Action: "member.remove"},
	{Method: "GET", Template: "/api/teams/{team}/invitations", Role: Admin, Scope: AdminScope, Locator: TeamPath},
	{Method: "POST", Template: "/api/teams/{team}/invitations", Role: Admin, Scope: AdminScope, Locator: TeamPath, Action: "invitation.create"},
	{Method: "DELETE", Template: "/api/teams/{team}/invitations/{id}", Role: Admin, Scope: AdminScope, Locator: TeamPath, Action: "invitation.revoke"},
	{Method: "GET", Template: "/api/teams/{team}/tokens", Role: Admin, Scope: AdminScope, Locator: TeamPath},
	{Method: "DELETE", Template: "/api/teams/{team}/tokens/{id}", Role: Admin, Scope: AdminScope, Locator: TeamPath, Action: "token.revoke"},
	{Method: "GET", Template: "/api/teams/{team}/audit", Role: Admin, Scope: AdminScope, Locator: TeamPath},

	// Billing: the team's owners, with a full or admin token.
	{Method: "GET", Template: "/api/billing", Role: Owner, Scope: AdminScope, Locator: TeamParam},
	{Method: "POST", Template: "/api/billing/checkout", Role: Owner, Scope: AdminScope, Locator: TeamParam, Action: "billing.checkout"},
	{Method: "POST", Template: "/api/billing/portal", Role: Owner, Scope: AdminScope, Locator: TeamParam, Action: "billing.portal"},
	{Method: "POST", Template: "/api/billing/sync", Role: Owner, Scope: AdminScope, Locator: TeamParam, Action: "billing.sync"},

	// Apps.
	{Method: "GET", Template: "/api/apps", Scope: Read, Locator: MemberTeams},
	{Method: "POST", Template: "/api/apps", Role: Admin, Scope: Write, Locator: TeamParam, Action: "app.create"},
	{Method: "GET", Template: "/api/apps/{slug}", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "DELETE", Template: "/api/apps/{slug}", Role: Admin, Scope: Write, Locator: AppPath, Action: "app.delete"},
	{Method: "GET", Template: "/api/apps/{slug}/env", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "PUT", Template: "/api/apps/{slug}/env", Role: Developer, Scope: Write, Locator: AppPath, Action: "env.replace"},
	{Method: "PATCH", Template: "/api/apps/{slug}/env", Role: Developer, Scope: Write, Locator: AppPath, Action: "env.set"},
	{Method: "DELETE", Template: "/api/apps/{slug}/env/{key}", Role: Developer, Scope: Write, Locator: AppPath, Action: "env.unset"},
	{Method: "GET", Template: "/api/apps/{slug}/domains", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/domains", Role: Admin, Scope: Write, Locator: AppPath, Action: "domain.add"},
	{Method: "DELETE", Template: "/api/apps/{slug}/domains/{hostname}", Role: Admin, Scope: Write, Locator: AppPath, Action: "domain.remove"},

	// Deploys, processes and cron.
	{Method: "GET", Template: "/api/apps/{slug}/deploys", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/deploys", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "deploy.create"},
	{Method: "GET", Template: "/api/apps/{slug}/deploys/{id}", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/deploys/{id}/cancel", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "deploy.cancel"},
	{Method: "POST", Template: "/api/apps/{slug}/deploys/{id}/rollback", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "deploy.rollback"},
	{Method: "GET", Template: "/api/apps/{slug}/formation", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "PATCH", Template: "/api/apps/{slug}/formation", Role: Developer, Scope: Write, Locator: AppPath, Action: "formation.scale"},
	{Method: "GET", Template: "/api/apps/{slug}/crons", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/crons", Role: Developer, Scope: Write, Locator: AppPath, Action: "cron.create"},
	{Method: "GET", Template: "/api/apps/{slug}/crons/{name}", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "PATCH", Template: "/api/apps/{slug}/crons/{name}", Role: Developer, Scope: Write, Locator: AppPath, Action: "cron.update"},
	{Method: "DELETE", Template: "/api/apps/{slug}/crons/{name}", Role: Developer, Scope: Write, Locator: AppPath, Action: "cron.delete"},
	{Method: "GET", Template: "/api/apps/{slug}/crons/{name}/runs", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/crons/{name}/runs", Role: Developer, Scope: Write, Locator: AppPath, Action: "cron.run"},

	// Previews: a developer's, as deploys are.
	{Method: "GET", Template: "/api/apps/{slug}/previews", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/previews", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "preview.create"},
	{Method: "GET", Template: "/api/apps/{slug}/previews/{id}", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "PATCH", Template: "/api/apps/{slug}/previews/{id}", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "preview.update"},
	{Method: "DELETE", Template: "/api/apps/{slug}/previews/{id}", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "preview.delete"},
	{Method: "POST", Template: "/api/apps/{slug}/previews/{id}/promote", Role: Developer, Scope: Deploy, Locator: AppPath, Action: "preview.promote"},

	// Logs, drains and metrics. A drain sends every line of the app somewhere else, so
	// seeing and changing drains is an admin's.
	{Method: "GET", Template: "/api/apps/{slug}/logs", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "GET", Template: "/api/apps/{slug}/logs/stream", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "GET", Template: "/api/apps/{slug}/drains", Role: Admin, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/drains", Role: Admin, Scope: Write, Locator: AppPath, Action: "drain.create"},
	{Method: "GET", Template: "/api/apps/{slug}/drains/{id}", Role: Admin, Scope: Read, Locator: AppPath},
	{Method: "DELETE", Template: "/api/apps/{slug}/drains/{id}", Role: Admin, Scope: Write, Locator: AppPath, Action: "drain.delete"},
	{Method: "POST", Template: "/api/apps/{slug}/drains/{id}/test", Role: Admin, Scope: Write, Locator: AppPath, Action: "drain.test"},
	{Method: "GET", Template: "/api/apps/{slug}/metrics", Role: Viewer, Scope: Read, Locator: AppPath},

	// The managed database: its lifecycle is admin's; a dump's contents are a developer's,
	// as environment values are.
	{Method: "GET", Template: "/api/apps/{slug}/database", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/database", Role: Admin, Scope: Write, Locator: AppPath, Action: "database.create"},
	{Method: "DELETE", Template: "/api/apps/{slug}/database", Role: Admin, Scope: Write, Locator: AppPath, Action: "database.delete"},
	{Method: "POST", Template: "/api/apps/{slug}/database/credentials/rotate", Role: Admin, Scope: Write, Locator: AppPath, Action: "database.rotate"},
	{Method: "GET", Template: "/api/apps/{slug}/database/dumps", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/database/dumps", Role: Developer, Scope: Write, Locator: AppPath, Action: "database.dump"},
	{Method: "GET", Template: "/api/apps/{slug}/database/dumps/{id}/download", Role: Developer, Scope: Write, Locator: AppPath},
	{Method: "GET", Template: "/api/apps/{slug}/database/restores", Role: Viewer, Scope: Read, Locator: AppPath},
	{Method: "POST", Template: "/api/apps/{slug}/database/restores", Role: Admin, Scope: Write, Locator: AppPath, Action: "database.restore"},
	{Method: "DELETE", Template: "/api/apps/{slug}/database/restores/{id}", Role: Admin, Scope: Write, Locator: AppPath, Action: "database.restore_cancel"},
}

// All returns a copy of the table.
func All() []Route { return append([]Route(nil), table...) }

// Find returns the route of method and template. Templates may be written OpenAPI style
// ({slug}) or Fiber style (:slug); HEAD is GET.
func Find(method, template string) (Route, bool) {
	if method == "HEAD" {
		method = "GET"
	}
	t := OpenAPITemplate(template)
	for _, r := range table {
		if r.Method == method && r.Template == t {
			return r, true
		}
	}
	return Route{}, false
}

// OpenAPITemplate turns a Fiber route path (/api/apps/:slug) into the table's style
// (/api/apps/{slug}); one already in that style is returned as it is.
func OpenAPITemplate(path string) string {
	if !strings.Contains(path, ":") {
		return strings.TrimSuffix(path, "/")
	}
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + strings.TrimSuffix(strings.TrimPrefix(s, ":"), "?") + "}"
		}
	}
	return strings.Join(segs, "/")
}
