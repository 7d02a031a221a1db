package routes

import (
	"strings"

	"tori.dev/pkg/routepath"
)

// Match is what the gateway knows about a request's path.
type Match struct {
	Route *Route // nil when the table does not list the operation
	Owner string // the service the path goes to; "" when none owns it (the gateway answers 404)
	Op    string // the rate-limit operation: "METHOD template", or "METHOD unknown"
}

// Public reports whether the operation needs no token.
func (m Match) Public() bool { return m.Route != nil && m.Route.Public }

// AddressWindow reports whether the operation has the per-address minute window of public
// routes: every public route but the probes.
func (m Match) AddressWindow() bool { return m.Public() && !m.Route.Probe }

// Bucket is the per-address bucket rule of the operation.
func (m Match) Bucket() Bucket {
	if m.Route == nil {
		return NoBucket
	}
	return m.Route.Bucket
}

// Find classifies a request by method and raw path (as received, before any unescaping).
//
// It matches the way the services' Fiber routers do (routepath: on the raw path, static
// segments case-insensitively, one trailing slash ignored), so that the gateway's decision
// (public or not, which owner) is the one the service will act on. Paths with empty, "." or
// ".." segments match nothing, so no normalisation anywhere can make one operation look like
// another. The console server matches the routes it never forwards with the same package.
func Find(method, path string) Match {
	if method == "HEAD" {
		method = "GET" // Fiber serves HEAD with the GET handler; it counts as a read
	}
	p := routepath.Trim(path)
	if !routepath.Clean(p) {
		return Match{Op: unknownOp(method)}
	}
	for i := range table {
		r := &table[i]
		if r.Method == method && r.segs.MatchesTrimmed(p) {
			return Match{Route: r, Owner: r.Owner, Op: r.op}
		}
	}
	return Match{Owner: ownerOf(p), Op: unknownOp(method)}
}

// ownerOf routes a path the table does not list by its prefix, as the architecture assigns
// prefixes to services.
func ownerOf(p string) string {
	s := strings.Split(p, "/")
	if len(s) < 2 || !routepath.Is(s[0], "api") {
		return ""
	}
	is := func(i int, word string) bool { return len(s) > i && routepath.Is(s[i], word) }
	switch {
	case is(1, "auth") && len(s) >= 3, is(1, "tokens"), is(1, "account") && len(s) == 2,
		is(1, "teams"), is(1, "invitations"):
		return Identity
	case is(1, "plans") && len(s) == 2, is(1, "billing"):
		return Billing
	case is(1, "apps") && len(s) <= 3:
		return Apps
	case is(1, "apps") && (is(3, "env") || is(3, "domains")):
		return Apps
	case is(1, "apps") && (is(3, "deploys") || is(3, "formation") || is(3, "crons")):
		return Deploys
	case is(1, "apps") && is(3, "logs") && (len(s) == 4 || len(s) == 5 && is(4, "stream")):
		return Logs
	case is(1, "apps") && is(3, "database"):
		return Databases
	}
	return ""
}

var unknownOps = map[string]string{}

func init() {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		unknownOps[m] = m + " " + Unknown
	}
}

func unknownOp(method string) string {
	if op, ok := unknownOps[method]; ok {
		return op
	}
	return "OTHER " + Unknown // any method a client invents shares one window
}

// IsRead reports whether a method is a read for the per-account limits: GET (and HEAD, which
// Fiber answers with the GET handler) is a read; everything else is a write.
func IsRead(method string) bool { return method == "GET" || method == "HEAD" }
