package preview

import (
	"errors"
	"strings"
	"testing"
	"time"

	"tori.dev/services/deploys/internal/deploy"
)

func ptr(n int64) *int64 { return &n }

// Each malformed input names its member; a good one gets its database default.
func TestInputCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    Input
		param string // "" when valid
	}{
		{"defaults", Input{}, ""},
		{"a name", Input{Name: "pr-12"}, ""},
		{"upper case name", Input{Name: "PR"}, "name"},
		{"name too long", Input{Name: strings.Repeat("a", 21)}, "name"},
		{"ttl 60", Input{TTLSeconds: ptr(60)}, ""},
		{"ttl 59", Input{TTLSeconds: ptr(59)}, "ttlSeconds"},
		{"ttl negative", Input{TTLSeconds: ptr(-1)}, "ttlSeconds"},
		{"ttl huge (capped later)", Input{TTLSeconds: ptr(1 << 62)}, ""},
		{"shared", Input{Database: "shared"}, ""},
		{"unknown database", Input{Database: "yes"}, "database"},
		{"env", Input{Env: map[string]string{"FEATURE_X": "on"}}, ""},
		{"env bad key", Input{Env: map[string]string{"feature": "on"}}, "env"},
		{"env NUL", Input{Env: map[string]string{"A": "a\x00"}}, "env"},
		{"env not UTF-8", Input{Env: map[string]string{"A": "\xff"}}, "env"},
		{"env value too large", Input{Env: map[string]string{"A": strings.Repeat("x", MaxOverrideBytes+1)}}, "env"},
		{"DATABASE_URL with none", Input{Env: map[string]string{"DATABASE_URL": "x"}}, "env"},
		{"DATABASE_RESTORE_URL with none", Input{Database: "none", Env: map[string]string{"DATABASE_RESTORE_URL": "x"}}, "env"},
		{"DATABASE_URL with shared", Input{Database: "shared", Env: map[string]string{"DATABASE_URL": "x"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			err := in.Check()
			var pe *deploy.ParamError
			switch {
			case c.param == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.param == "" && in.Database == "":
				t.Fatal("no database default")
			case c.param != "" && (!errors.As(err, &pe) || pe.Name != c.param):
				t.Fatalf("error %v, want one naming %s", err, c.param)
			}
		})
	}
	many := map[string]string{}
	for i := range MaxOverrides + 1 {
		many["K"+strings.Repeat("X", i)] = "v"
	}
	if err := (&Input{Env: many}).Check(); err == nil {
		t.Fatal("more than MaxOverrides overrides accepted")
	}
}

func TestCapTTL(t *testing.T) {
	for _, c := range []struct {
		asked    *int64
		maxHours int64
		want     int64
	}{
		{nil, 168, 72 * 3600},
		{nil, 24, 24 * 3600},
		{ptr(3600), 24, 3600},
		{ptr(1 << 62), 24, 24 * 3600},
		{ptr(100 * 3600), 720, 100 * 3600},
	} {
		if got := CapTTL(c.asked, c.maxHours); got != c.want {
			t.Errorf("CapTTL(%v, %d) = %d, want %d", c.asked, c.maxHours, got, c.want)
		}
	}
}

// deploying → ready | failed for its current revision only; removed is final.
func TestPreviewTransitions(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	p := &Preview{Status: Deploying, DeployID: "d1"}
	if p.MarkReady(now, "d0") || p.Status != Deploying {
		t.Fatal("a stale revision's READY applied")
	}
	if err := p.Promotable(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("promote deploying: %v", err)
	}
	if !p.MarkReady(now, "d1") || p.Status != Ready || p.ServingDeployID != "d1" {
		t.Fatalf("ready: %+v", p)
	}
	if err := p.Promotable(); err != nil {
		t.Fatal(err)
	}
	p.Replace(now, "d2", DatabaseShared, nil, 60)
	if p.Status != Deploying || p.ServingDeployID != "d1" || !p.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("replaced: %+v", p)
	}
	if p.MarkFailed(now, "d1", "x") || !p.MarkFailed(now, "d2", "build_failed") || p.Error != "build_failed" {
		t.Fatalf("failed: %+v", p)
	}
	if !p.Remove(now, Expired) || p.Remove(now, Deleted) || p.Status != Expired {
		t.Fatalf("removed: %+v", p)
	}
	if err := p.Extend(now, 600); !errors.Is(err, ErrExpired) {
		t.Fatalf("extend expired: %v", err)
	}
	if err := p.Promotable(); !errors.Is(err, ErrExpired) {
		t.Fatalf("promote expired: %v", err)
	}
}
