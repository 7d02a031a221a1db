package callerid

import (
	"strings"

	"tori.dev/contract/access"
)

// EncodeTeams writes memberships as HeaderTeams carries them: "id:slug:role[:personal]"
// joined by ";". Ids are UUIDs, slugs and roles are names, so neither separator occurs in one.
func EncodeTeams(ms []access.Membership) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(m.TeamID + ":" + m.Slug + ":" + m.Role.String())
		if m.Personal {
			b.WriteString(":personal")
		}
	}
	return b.String()
}

// DecodeTeams reads HeaderTeams; a malformed entry is left out (it grants nothing).
func DecodeTeams(s string) []access.Membership {
	if s == "" {
		return nil
	}
	var out []access.Membership
	for _, part := range strings.Split(s, ";") {
		f := strings.Split(part, ":")
		if len(f) < 3 || len(f) > 4 || f[0] == "" {
			continue
		}
		role, ok := access.ParseRole(f[2])
		if !ok {
			continue
		}
		out = append(out, access.Membership{TeamID: f[0], Slug: f[1], Role: role, Personal: len(f) == 4 && f[3] == "personal"})
	}
	return out
}

// Principal is what the caller may do. A caller signed without teams (a signer that
// predates them: tools, tests) owns its personal team, whose id is the account's.
func (c Caller) Principal() access.Principal {
	p := access.Principal{Scope: access.ScopeOf(c.Scope), Session: c.TokenKind == KindSession}
	if c.Teams == "" {
		if c.AccountID != "" {
			p.Memberships = []access.Membership{{TeamID: c.AccountID, Role: access.Owner, Personal: true}}
		}
	} else {
		p.Memberships = DecodeTeams(c.Teams)
	}
	if c.Apps != "" {
		p.Apps = strings.Split(c.Apps, ",")
	}
	return p
}
