package auth

import (
	"errors"
	"testing"
	"time"

	"tori.dev/contract/access"
)

func TestParseTokenSpec(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	in := func(s int64) *int64 { return &s }
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, tc := range []struct {
		name      string
		scopes    []string
		apps      []string
		expiresIn *int64
		expiresAt *time.Time
		field     string // "" valid
		scope     access.Scope
		end       time.Time
	}{
		{"broadest counts, default end", []string{"read", "write", "deploy"}, nil, nil, nil, "", access.Write, now.Add(90 * 24 * time.Hour)},
		{"60 seconds", []string{"read"}, nil, in(60), nil, "", access.Read, now.Add(time.Minute)},
		{"a year", []string{"admin"}, nil, in(365 * 24 * 3600), nil, "", access.AdminScope, now.Add(365 * 24 * time.Hour)},
		{"expiresAt", []string{"deploy"}, nil, nil, at(time.Hour), "", access.Deploy, now.Add(time.Hour)},
		{"59 seconds", []string{"read"}, nil, in(59), nil, "expiresIn", 0, time.Time{}},
		{"negative", []string{"read"}, nil, in(-1), nil, "expiresIn", 0, time.Time{}},
		{"a year and a second", []string{"read"}, nil, in(365*24*3600 + 1), nil, "expiresIn", 0, time.Time{}},
		{"past", []string{"read"}, nil, nil, at(-time.Second), "expiresAt", 0, time.Time{}},
		{"both", []string{"read"}, nil, in(60), at(time.Hour), "expiresAt", 0, time.Time{}},
		{"no scopes", nil, nil, nil, nil, "scopes", 0, time.Time{}},
		{"full is no scope to ask for", []string{"full"}, nil, nil, nil, "scopes", 0, time.Time{}},
		{"an empty app", []string{"read"}, []string{"web", ""}, nil, nil, "apps", 0, time.Time{}},
	} {
		spec, err := ParseTokenSpec(tc.scopes, tc.apps, tc.expiresIn, tc.expiresAt, now)
		var pe *ParameterError
		switch {
		case tc.field == "" && (err != nil || spec.Scope != tc.scope || !spec.ExpiresAt.Equal(tc.end)):
			t.Errorf("%s: %+v %v", tc.name, spec, err)
		case tc.field != "" && (!errors.As(err, &pe) || pe.Field != tc.field):
			t.Errorf("%s: %v, want field %s", tc.name, err, tc.field)
		}
	}
	spec, _ := ParseTokenSpec([]string{"read"}, []string{"web", "api", "web"}, nil, nil, now)
	if len(spec.Apps) != 2 || spec.Apps[0] != "api" || spec.Apps[1] != "web" {
		t.Fatalf("apps %v", spec.Apps)
	}
	if spec, _ := ParseTokenSpec([]string{"read"}, []string{}, nil, nil, now); spec.Apps != nil {
		t.Fatalf("an empty list pins: %v", spec.Apps)
	}
}

func TestCovers(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	end := now.Add(time.Hour)
	parent := APIToken{TeamID: "t1", Scope: "deploy", Apps: []string{"api", "web"}, ExpiresAt: &end}
	open := APIToken{TeamID: "t1", Scope: "write", ExpiresAt: &end}
	for _, tc := range []struct {
		name     string
		parent   APIToken
		team     string
		spec     TokenSpec
		required string // "" covered
	}{
		{"same", parent, "t1", TokenSpec{Scope: access.Deploy, Apps: []string{"api", "web"}, ExpiresAt: end}, ""},
		{"narrower", parent, "t1", TokenSpec{Scope: access.Read, Apps: []string{"web"}, ExpiresAt: now}, ""},
		{"other team", parent, "t2", TokenSpec{Scope: access.Read, Apps: []string{"web"}, ExpiresAt: now}, "full"},
		{"broader scope", parent, "t1", TokenSpec{Scope: access.Write, Apps: []string{"web"}, ExpiresAt: now}, "write"},
		{"admin scope", parent, "t1", TokenSpec{Scope: access.AdminScope, Apps: []string{"web"}, ExpiresAt: now}, "admin"},
		{"other app", parent, "t1", TokenSpec{Scope: access.Read, Apps: []string{"blog"}, ExpiresAt: now}, "full"},
		{"unpinned", parent, "t1", TokenSpec{Scope: access.Read, ExpiresAt: now}, "full"},
		{"a moment later", parent, "t1", TokenSpec{Scope: access.Read, Apps: []string{"web"}, ExpiresAt: end.Add(time.Millisecond)}, "full"},
		{"unpinned parent covers any apps", open, "t1", TokenSpec{Scope: access.Write, Apps: []string{"anything"}, ExpiresAt: end}, ""},
		{"unpinned parent, unpinned child", open, "t1", TokenSpec{Scope: access.Deploy, ExpiresAt: end}, ""},
	} {
		err := tc.parent.Covers(tc.team, tc.spec)
		var se *ScopeError
		if tc.required == "" && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.required != "" && (!errors.As(err, &se) || se.Required != tc.required || !errors.Is(err, ErrInsufficientScope)) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.required)
		}
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	if (APIToken{}).Expired(now.Add(100 * 365 * 24 * time.Hour)) {
		t.Fatal("a full token expired")
	}
	if tok := (APIToken{TeamID: "t", ExpiresAt: &now}); !tok.Expired(now) || tok.Expired(now.Add(-time.Nanosecond)) {
		t.Fatal("a scoped token ends at its ExpiresAt")
	}
}
