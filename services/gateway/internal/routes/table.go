// Package routes is the gateway's table of the public API: which service owns each path, which
// operations need no token, and the route template every rate limit and log line is keyed by.
package routes

import "tori.dev/pkg/routepath"

// Owners of paths. Local routes are answered by the gateway itself.
const (
	Local     = "local"
	Identity  = "identity"
	Billing   = "billing"
	Apps      = "apps"
	Deploys   = "deploys"
	Logs      = "logs"
	Databases = "databases"
)

// LogStream is the live log stream's template: the one answer that lasts (Server-Sent
// Events), exempt from the write timeout and counted per account while open.
const LogStream = "/api/apps/{slug}/logs/stream"

// Unknown is the template of every path the table does not list, so that probing random
// paths shares one rate-limit window instead of creating a window per path.
const Unknown = "unknown"

// Bucket says how the per-address 15-minute bucket applies to a route.
type Bucket int

const (
	// NoBucket: only the per-account window applies (when the route is authenticated).
	NoBucket Bucket = iota
	// CountAll: every request counts, and one over the bucket is refused with rate_limited.
	CountAll
	// CountFlagged: only requests identity flags with X-Tori-Count-Bucket count, and one
	// arriving over the bucket is refused with slow_down (POST /api/auth/cli/token).
	CountFlagged
)

// Route is one operation of the public API.
type Route struct {
	Method   string
	Template string // OpenAPI style: /api/apps/{slug}
	Owner    string
	Public   bool // no bearer token needed
	Bucket   Bucket
	// Mints: a 2xx answer carries a new credential (a token, or a code that becomes one). The
	// idempotency store never keeps such an answer (docs/conventions.md).
	Mints bool
	// Probe: a health or readiness probe, never limited (Kubernetes and load balancers poll
	// it from a few addresses). Every other public route has a per-address window.
	Probe bool
	// Upload: a multipart POST carrying a deploy's payload (a deploy, a preview), the one
	// body that may be large and slow; it is streamed with its digest sealed into a trailer.
	Upload bool

	op   string // "METHOD template", the rate-limit operation
	segs routepath.Template
}

// Op is the operation name rate limits are keyed by: method and template.
func (r *Route) Op() string { return r.op }

// table lists every operation of the public API. The gateway routes unlisted paths under an
// owner's prefix too (see ownerOf), counted as Unknown, so a service can add a route before
// this table learns it; the OpenAPI test keeps this table and the document in step.
var table = []Route{
	{Method: "GET", Template: "/healthz", Owner: Local, Public: true, Probe: true},
	{Method: "GET", Template: "/readyz", Owner: Local, Public: true, Probe: true},
	{Method: "GET", Template: "/api/openapi.json", Owner: Local, Public: true},

	{Method: "POST", Template: "/api/auth/magic-link", Owner: Identity, Public: true, Bucket: CountAll},
	{Method: "POST", Template: "/api/auth/magic-link/verify", Owner: Identity, Public: true, Bucket: CountAll, Mints: true},
	{Method: "POST", Template: "/api/auth/logout", Owner: Identity, Bucket: CountAll},
	{Method: "POST", Template: "/api/auth/cli/device", Owner: Identity, Public: true, Bucket: CountAll},
	{Method: "POST", Template: "/api/auth/cli/approve", Owner: Identity, Bucket: CountAll},
	{Method: "POST", Template: "/api/auth/cli/deny", Owner: Identity, Bucket: CountAll},
	{Method: "POST", Template: "/api/auth/cli/authorize", Owner: Identity, Bucket: CountAll, Mints: true},
	{Method: "POST", Template: "/api/auth/cli/token", Owner: Identity, Public: true, Bucket: CountFlagged, Mints: true},
	{Method: "GET", Template: "/api/tokens", Owner: Identity},
	{Method: "POST", Template: "/api/tokens", Owner: Identity, Mints: true},
	{Method: "DELETE", Template: "/api/tokens/{id}", Owner: Identity},
	{Method: "GET", Template: "/api/account", Owner: Identity},
	{Method: "PATCH", Template: "/api/account", Owner: Identity},

	// Teams, their members, invitations, tokens and audit log (identity's).
	{Method: "GET", Template: "/api/teams", Owner: Identity},
	{Method: "POST", Template: "/api/teams", Owner: Identity},
	{Method: "GET", Template: "/api/teams/{team}", Owner: Identity},
	{Method: "PATCH", Template: "/api/teams/{team}", Owner: Identity},
	{Method: "DELETE", Template: "/api/teams/{team}", Owner: Identity},
	{Method: "GET", Template: "/api/teams/{team}/members", Owner: Identity},
	{Method: "PATCH", Template: "/api/teams/{team}/members/{userId}", Owner: Identity},
	{Method: "DELETE", Template: "/api/teams/{team}/members/{userId}", Owner: Identity},
	{Method: "GET", Template: "/api/teams/{team}/invitations", Owner: Identity},
	{Method: "POST", Template: "/api/teams/{team}/invitations", Owner: Identity},
	{Method: "DELETE", Template: "/api/teams/{team}/invitations/{id}", Owner: Identity},
	{Method: "GET", Template: "/api/teams/{team}/tokens", Owner: Identity},
	{Method: "DELETE", Template: "/api/teams/{team}/tokens/{id}", Owner: Identity},
	{Method: "GET", Template: "/api/teams/{team}/audit", Owner: Identity},
	{Method: "POST", Template: "/api/invitations/accept", Owner: Identity},

	{Method: "GET", Template: "/api/plans", Owner: Billing, Public: true},
	{Method: "GET", Template: "/api/billing", Owner: Billing},
	{Method: "POST", Template: "/api/billing/checkout", Owner: Billing},
	{Method: "POST", Template: "/api/billing/portal", Owner: Billing},
	{Method: "POST", Template: "/api/billing/sync", Owner: Billing},
	// The payment provider's webhook: no token and no per-account window; billing verifies
	// the provider's signature over the raw body.
	{Method: "POST", Template: "/api/billing/webhook", Owner: Billing, Public: true},

	{Method: "GET", Template: "/api/apps", Owner: Apps},
	{Method: "POST", Template: "/api/apps", Owner: Apps},
	{Method: "GET", Template: "/api/apps/{slug}", Owner: Apps},
	{Method: "DELETE", Template: "/api/apps/{slug}", Owner: Apps},
	{Method: "GET", Template: "/api/apps/{slug}/env", Owner: Apps},
	{Method: "PUT", Template: "/api/apps/{slug}/env", Owner: Apps},
	{Method: "PATCH", Template: "/api/apps/{slug}/env", Owner: Apps},
	{Method: "DELETE", Template: "/api/apps/{slug}/env/{key}", Owner: Apps},
	{Method: "GET", Template: "/api/apps/{slug}/domains", Owner: Apps},
	{Method: "POST", Template: "/api/apps/{slug}/domains", Owner: Apps},
	{Method: "DELETE", Template: "/api/apps/{slug}/domains/{hostname}", Owner: Apps},

	{Method: "GET", Template: "/api/apps/{slug}/deploys", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/deploys", Owner: Deploys, Upload: true},
	{Method: "GET", Template: "/api/apps/{slug}/deploys/{id}", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/deploys/{id}/cancel", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/deploys/{id}/rollback", Owner: Deploys},
	{Method: "GET", Template: "/api/apps/{slug}/formation", Owner: Deploys},
	{Method: "PATCH", Template: "/api/apps/{slug}/formation", Owner: Deploys},
	{Method: "GET", Template: "/api/apps/{slug}/crons", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/crons", Owner: Deploys},
	{Method: "GET", Template: "/api/apps/{slug}/crons/{name}", Owner: Deploys},
	{Method: "PATCH", Template: "/api/apps/{slug}/crons/{name}", Owner: Deploys},
	{Method: "DELETE", Template: "/api/apps/{slug}/crons/{name}", Owner: Deploys},
	{Method: "GET", Template: "/api/apps/{slug}/crons/{name}/runs", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/crons/{name}/runs", Owner: Deploys},

	{Method: "GET", Template: "/api/apps/{slug}/previews", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/previews", Owner: Deploys, Upload: true},
	{Method: "GET", Template: "/api/apps/{slug}/previews/{id}", Owner: Deploys},
	{Method: "PATCH", Template: "/api/apps/{slug}/previews/{id}", Owner: Deploys},
	{Method: "DELETE", Template: "/api/apps/{slug}/previews/{id}", Owner: Deploys},
	{Method: "POST", Template: "/api/apps/{slug}/previews/{id}/promote", Owner: Deploys},

	{Method: "GET", Template: "/api/apps/{slug}/logs", Owner: Logs},
	{Method: "GET", Template: LogStream, Owner: Logs},
	{Method: "GET", Template: "/api/apps/{slug}/drains", Owner: Logs},
	{Method: "POST", Template: "/api/apps/{slug}/drains", Owner: Logs},
	{Method: "GET", Template: "/api/apps/{slug}/drains/{id}", Owner: Logs},
	{Method: "DELETE", Template: "/api/apps/{slug}/drains/{id}", Owner: Logs},
	{Method: "POST", Template: "/api/apps/{slug}/drains/{id}/test", Owner: Logs},
	{Method: "GET", Template: "/api/apps/{slug}/metrics", Owner: Logs},

	{Method: "GET", Template: "/api/apps/{slug}/database", Owner: Databases},
	{Method: "POST", Template: "/api/apps/{slug}/database", Owner: Databases},
	{Method: "DELETE", Template: "/api/apps/{slug}/database", Owner: Databases},
	{Method: "POST", Template: "/api/apps/{slug}/database/credentials/rotate", Owner: Databases},
	{Method: "GET", Template: "/api/apps/{slug}/database/dumps", Owner: Databases},
	{Method: "POST", Template: "/api/apps/{slug}/database/dumps", Owner: Databases},
	{Method: "GET", Template: "/api/apps/{slug}/database/dumps/{id}/download", Owner: Databases},
	{Method: "GET", Template: "/api/apps/{slug}/database/restores", Owner: Databases},
	{Method: "POST", Template: "/api/apps/{slug}/database/restores", Owner: Databases},
	{Method: "DELETE", Template: "/api/apps/{slug}/database/restores/{id}", Owner: Databases},
}

func init() {
	for i := range table {
		r := &table[i]
		r.op = r.Method + " " + r.Template
		r.segs = routepath.Parse(r.Template)
	}
}

// All returns a copy of the table, for tests and documentation checks.
func All() []Route {
	return append([]Route(nil), table...)
}
