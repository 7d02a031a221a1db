package access

import (
	"slices"
	"testing"
)

func TestParseRole(t *testing.T) {
	for i, name := range []string{"viewer", "developer", "admin", "owner"} {
		r, ok := ParseRole(name)
		if !ok || r.String() != name || r != Roles()[i] {
			t.Errorf("ParseRole(%q) = %v, %v", name, r, ok)
		}
	}
	for _, name := range []string{"", "none", "Owner", " owner", "root"} {
		if r, ok := ParseRole(name); ok || r != NoRole {
			t.Errorf("ParseRole(%q) = %v, %v; want nothing", name, r, ok)
		}
	}
	if NoRole.String() != "" || Role(99).String() != "" || Role(-1).String() != "" {
		t.Error("a role outside the list has a name")
	}
	// Each role may do what those below it may.
	if !(NoRole < Viewer && Viewer < Developer && Developer < Admin && Admin < Owner) {
		t.Error("roles out of order")
	}
}

func TestScopes(t *testing.T) {
	for i, name := range []string{"read", "deploy", "write", "admin"} {
		s, ok := ParseScope(name)
		if !ok || s.String() != name || s != Scopes()[i] {
			t.Errorf("ParseScope(%q) = %v, %v", name, s, ok)
		}
	}
	// "full" is what a session or full token has; no client may ask for it by name.
	for _, name := range []string{"", "full", "Admin", "root"} {
		if _, ok := ParseScope(name); ok {
			t.Errorf("ParseScope(%q) accepted", name)
		}
	}
	if !(NoScope < Read && Read < Deploy && Deploy < Write && Write < AdminScope && AdminScope < FullScope) {
		t.Error("scopes out of order")
	}
}

func TestScopeOf(t *testing.T) {
	for header, want := range map[string]Scope{
		"":       FullScope, // a session or a full token signs no scope
		"read":   Read,
		"deploy": Deploy,
		"write":  Write,
		"admin":  AdminScope,
		"full":   NoScope, // the name is not a header value: it would grant everything
		"bogus":  NoScope,
		"Deploy": NoScope,
	} {
		if got := ScopeOf(header); got != want {
			t.Errorf("ScopeOf(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestBroadest(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want Scope
		ok   bool
	}{
		{[]string{"read"}, Read, true},
		{[]string{"read", "deploy"}, Deploy, true},
		{[]string{"admin", "read"}, AdminScope, true},
		{[]string{" write "}, Write, true},
		{nil, NoScope, false},
		{[]string{}, NoScope, false},
		{[]string{"read", "bogus"}, NoScope, false},
		{[]string{"full"}, NoScope, false},
		{[]string{""}, NoScope, false},
	} {
		got, ok := Broadest(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Broadest(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTeamBySlug(t *testing.T) {
	personal := Membership{TeamID: "p", Slug: "una", Role: Owner, Personal: true}
	acme := Membership{TeamID: "t", Slug: "acme", Role: Developer}
	full := Principal{Memberships: []Membership{acme, personal}, Scope: FullScope}
	for slug, want := range map[string]string{"": "p", "una": "p", "acme": "t", "other": "-"} {
		m, ok := full.TeamBySlug(slug)
		got := "-"
		if ok {
			got = m.TeamID
		}
		if got != want {
			t.Errorf("full caller, TeamBySlug(%q) = %s, want %s", slug, got, want)
		}
	}
	// A scoped token's one team is its default; a full caller without a personal team (not
	// a state identity makes) has none.
	scoped := Principal{Memberships: []Membership{acme}, Scope: Deploy}
	if m, ok := scoped.TeamBySlug(""); !ok || m.TeamID != "t" {
		t.Errorf("scoped token's default team: %v %v", m, ok)
	}
	if _, ok := (Principal{Memberships: []Membership{acme}, Scope: FullScope}).TeamBySlug(""); ok {
		t.Error("a full caller's default is its personal team, not any one team")
	}
	if _, ok := (Principal{Scope: Deploy}).TeamBySlug(""); ok {
		t.Error("no teams, no default")
	}
	if m, ok := full.TeamByID("t"); !ok || m.Slug != "acme" || full.RoleIn("t") != Developer || full.RoleIn("x") != NoRole {
		t.Error("TeamByID / RoleIn")
	}
	pinned := Principal{Apps: []string{"a"}}
	if !pinned.Pinned() || !pinned.MaySeeApp("a") || pinned.MaySeeApp("b") || (Principal{}).Pinned() || !(Principal{}).MaySeeApp("b") {
		t.Error("Pinned / MaySeeApp")
	}
	if !slices.Equal(Roles(), []Role{Viewer, Developer, Admin, Owner}) {
		t.Error("Roles")
	}
}
