package callerid

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"tori.dev/contract/access"
)

func TestTeamsRoundTrip(t *testing.T) {
	ms := []access.Membership{
		{TeamID: "0190f5e4-0000-7000-8000-0000000000a1", Slug: "una", Role: access.Owner, Personal: true},
		{TeamID: "0190f5e4-0000-7000-8000-0000000000b2", Slug: "acme-web", Role: access.Viewer},
		{TeamID: "0190f5e4-0000-7000-8000-0000000000c3", Slug: "b2", Role: access.Developer},
		{TeamID: "0190f5e4-0000-7000-8000-0000000000d4", Slug: "ops", Role: access.Admin},
	}
	s := EncodeTeams(ms)
	if want := "0190f5e4-0000-7000-8000-0000000000a1:una:owner:personal;0190f5e4-0000-7000-8000-0000000000b2:acme-web:viewer;" +
		"0190f5e4-0000-7000-8000-0000000000c3:b2:developer;0190f5e4-0000-7000-8000-0000000000d4:ops:admin"; s != want {
		t.Fatalf("encoded %q, want %q", s, want)
	}
	if got := DecodeTeams(s); !slices.Equal(got, ms) {
		t.Fatalf("decoded %+v, want %+v", got, ms)
	}
	if EncodeTeams(nil) != "" || DecodeTeams("") != nil {
		t.Fatal("no teams is the empty string and back")
	}
}

// A malformed entry grants nothing, and costs the well-formed ones next to it nothing.
func TestMalformedTeamsGrantNothing(t *testing.T) {
	const good = "t1:acme:developer"
	for _, bad := range []string{
		"t2:x:superuser",        // unknown role
		"t2:x:",                 // no role
		"t2:x:Owner",            // roles are lowercase
		"t2:x",                  // too few fields
		"t2:x:owner:personal:y", // too many
		":x:owner",              // no team id
		"",                      // empty entry
		"t2",
	} {
		got := DecodeTeams(bad + ";" + good)
		if len(got) != 1 || got[0] != (access.Membership{TeamID: "t1", Slug: "acme", Role: access.Developer}) {
			t.Errorf("%q: decoded %+v, want only the good entry", bad, got)
		}
		if got := DecodeTeams(bad); len(got) != 0 {
			t.Errorf("%q alone: decoded %+v", bad, got)
		}
	}
	// Only the word "personal" marks a personal team.
	if got := DecodeTeams("t1:me:owner:yes"); len(got) != 1 || got[0].Personal {
		t.Errorf("decoded %+v", got)
	}
}

func TestPrincipal(t *testing.T) {
	// Signed without teams (a tool, a test, a signer older than teams): the owner of the
	// personal team whose id is the account's, with every scope.
	p := Caller{AccountID: "acc", UserID: "usr", TokenKind: KindAPI, TokenID: "t"}.Principal()
	if len(p.Memberships) != 1 || p.Memberships[0] != (access.Membership{TeamID: "acc", Role: access.Owner, Personal: true}) {
		t.Fatalf("memberships %+v", p.Memberships)
	}
	if p.Scope != access.FullScope || p.Session || p.Pinned() {
		t.Fatalf("principal %+v", p)
	}
	if m, ok := p.TeamBySlug(""); !ok || m.TeamID != "acc" {
		t.Fatal("the default team is the personal one")
	}
	if s := (Caller{AccountID: "acc", TokenKind: KindSession}).Principal(); !s.Session {
		t.Fatal("a session is a session")
	}
	// Anonymous: no team at all.
	if p := (Caller{}).Principal(); len(p.Memberships) != 0 {
		t.Fatalf("an anonymous caller has teams %+v", p.Memberships)
	}

	// With teams: exactly those, the token's scope and apps.
	p = Caller{AccountID: "acc", TokenKind: KindAPI, Teams: "team:acme:developer", Scope: "deploy", Apps: "web,api"}.Principal()
	if len(p.Memberships) != 1 || p.RoleIn("team") != access.Developer || p.RoleIn("acc") != access.NoRole {
		t.Fatalf("memberships %+v: a caller with teams is not also the owner of its account's team", p.Memberships)
	}
	if p.Scope != access.Deploy || !slices.Equal(p.Apps, []string{"web", "api"}) {
		t.Fatalf("principal %+v", p)
	}
	// Teams that all fail to decode leave no membership: never the personal-team default.
	if p := (Caller{AccountID: "acc", Teams: "garbage"}).Principal(); len(p.Memberships) != 0 {
		t.Fatalf("undecodable teams granted %+v", p.Memberships)
	}
	// A scope the contract does not know grants nothing.
	if p := (Caller{AccountID: "acc", Scope: "everything"}).Principal(); p.Scope != access.NoScope {
		t.Fatalf("scope %v", p.Scope)
	}
}

// The teams, scope, pinned apps and client address are signed: changing any one of them on
// the way makes the request fail verification.
func TestSignatureCoversTeamsScopeAppsAndClientIP(t *testing.T) {
	key := []byte("k1")
	now := time.Unix(1_800_000_000, 0)
	c := Caller{AccountID: "acc", UserID: "usr", TokenKind: KindAPI, TokenID: "t",
		Teams: "team:acme:developer", Scope: "deploy", Apps: "web", ClientIP: "203.0.113.9"}
	h := http.Header{}
	SignBody(key, h.Set, c, "POST", host, "/api/apps/web/deploys", now, DigestOf([]byte("{}")))
	if got, err := Verify(key, h.Get, "POST", host, "/api/apps/web/deploys", now); err != nil || got != c {
		t.Fatalf("untouched: %+v %v", got, err)
	}
	for header, forged := range map[string]string{
		HeaderTeams:    "team:acme:owner",
		HeaderScope:    "",
		HeaderApps:     "web,api",
		HeaderClientIP: "198.51.100.1",
	} {
		t.Run(header, func(t *testing.T) {
			f := h.Clone()
			f.Set(header, forged)
			if _, err := Verify(key, f.Get, "POST", host, "/api/apps/web/deploys", now); err != ErrInvalid {
				t.Fatalf("%s changed to %q: %v, want ErrInvalid", header, forged, err)
			}
			f.Del(header)
			if _, err := Verify(key, f.Get, "POST", host, "/api/apps/web/deploys", now); err != ErrInvalid {
				t.Fatalf("%s removed: %v, want ErrInvalid", header, err)
			}
		})
	}
	// Moving a value from one field to its neighbour changes the signed text too.
	f := h.Clone()
	f.Set(HeaderScope, "web")
	f.Set(HeaderApps, "deploy")
	if _, err := Verify(key, f.Get, "POST", host, "/api/apps/web/deploys", now); err != ErrInvalid {
		t.Fatalf("swapped fields: %v", err)
	}
}
