package httpapi

import (
	"strings"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/routes"
)

// Tokens is the gateway's token cache as far as a revocation or a change of roles passing
// through is concerned (auth.Cache): Evict drops a token id, EvictUser every token of a
// person, and both advance the cache's generation, so an introspection already in flight is
// not kept after them either.
type Tokens interface {
	Evict(tokenID string)
	EvictUser(userID string)
}

// revokedBy names the token a successful answer of m has just revoked: the caller's own on
// logout, the path's id on DELETE /api/tokens/{id} and /api/teams/{team}/tokens/{id}; ""
// for every other operation.
func revokedBy(m routes.Match, path string, caller callerid.Caller) string {
	if m.Route == nil || m.Route.Owner != routes.Identity {
		return ""
	}
	switch m.Op {
	case "POST /api/auth/logout":
		return caller.TokenID
	case "DELETE /api/tokens/{id}", "DELETE /api/teams/{team}/tokens/{id}":
		return lastSegment(path)
	}
	return ""
}

// rolesChangedBy names the person whose roles a successful answer of m has just changed: the
// path's member on PATCH and DELETE /api/teams/{team}/members/{userId}; the caller on making
// or deleting a team and on accepting an invitation (their next request, often at once, acts
// in the team); "" otherwise.
func rolesChangedBy(m routes.Match, path string, caller callerid.Caller) string {
	if m.Route == nil || m.Route.Owner != routes.Identity {
		return ""
	}
	switch m.Op {
	case "PATCH /api/teams/{team}/members/{userId}", "DELETE /api/teams/{team}/members/{userId}":
		return lastSegment(path)
	case "POST /api/teams", "DELETE /api/teams/{team}", "POST /api/invitations/accept":
		return caller.UserID
	}
	return ""
}

func lastSegment(path string) string {
	p := strings.TrimSuffix(path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// forgetRevoked drops, once identity has confirmed a revocation or a change of a member's
// role (any 2xx), the revoked token or every token of that member, and the caller's account
// copy here, before the answer reaches the client: the next request must not be answered
// from this gateway's memory. Other gateways drop theirs on identity.token.revoked and
// identity.membership.changed.
func (s *Server) forgetRevoked(m routes.Match, path string, caller callerid.Caller, status int) {
	if status < 200 || status > 299 {
		return
	}
	if id := revokedBy(m, path, caller); id != "" {
		if s.Tokens != nil {
			s.Tokens.Evict(id)
		}
		if s.Streams != nil {
			s.Streams.Revoke(id) // its open log streams end with their final event
		}
		if s.Accounts != nil {
			s.Accounts.Cache.Evict(caller.AccountID)
		}
	}
	if user := rolesChangedBy(m, path, caller); user != "" {
		if s.Tokens != nil {
			s.Tokens.EvictUser(user)
		}
		if s.Streams != nil {
			s.Streams.EndUser(user)
		}
	}
}
