package httpapi

import (
	"strings"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/routes"
)

// Tokens is the gateway's token cache as far as a revocation passing through is concerned
// (auth.Cache): Evict drops a token id and advances the cache's generation, so an
// introspection already in flight is not kept after it either.
type Tokens interface {
	Evict(tokenID string)
}

// revokedBy names the token a successful answer of m has just revoked: the caller's own on
// logout, the path's id on DELETE /api/tokens/{id}; "" for every other operation.
func revokedBy(m routes.Match, path string, caller callerid.Caller) string {
	if m.Route == nil || m.Route.Owner != routes.Identity {
		return ""
	}
	switch m.Op {
	case "POST /api/auth/logout":
		return caller.TokenID
	case "DELETE /api/tokens/{id}":
		p := strings.TrimSuffix(path, "/")
		return p[strings.LastIndexByte(p, '/')+1:]
	}
	return ""
}

// forgetRevoked drops, once identity has confirmed a revocation (any 2xx), the revoked token
// and the caller's account copy here, before the answer reaches the client: the caller's next
// request must not be answered from this gateway's memory. Other gateways drop theirs on
// identity.token.revoked.
func (s *Server) forgetRevoked(m routes.Match, path string, caller callerid.Caller, status int) {
	if status < 200 || status > 299 {
		return
	}
	id := revokedBy(m, path, caller)
	if id == "" {
		return
	}
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
