package database

import (
	"errors"
	"testing"
)

func TestTransitions(t *testing.T) {
	all := []Status{StatusProvisioning, StatusReady, StatusReadOnly, StatusDeleting, StatusFailed}
	allowed := map[[2]Status]bool{
		{StatusProvisioning, StatusReady}:    true,
		{StatusProvisioning, StatusFailed}:   true,
		{StatusProvisioning, StatusDeleting}: true,
		{StatusReady, StatusReadOnly}:        true,
		{StatusReady, StatusDeleting}:        true,
		{StatusReadOnly, StatusReady}:        true,
		{StatusReadOnly, StatusDeleting}:     true,
		{StatusFailed, StatusDeleting}:       true,
	}
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]Status{from, to}]
			got, err := Move(from, to)
			if want {
				if err != nil || got != to {
					t.Errorf("%s → %s: %v, %v; want allowed", from, to, got, err)
				}
				continue
			}
			if !errors.Is(err, ErrTransition) || got != from {
				t.Errorf("%s → %s: %v, %v; want ErrTransition and to stay", from, to, got, err)
			}
		}
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		want bool
	}{
		{"provisioning", true}, {"ready", true}, {"read_only", true}, {"deleting", true},
		{"failed", true}, {"", false}, {"READY", false}, {"gone", false},
	} {
		if got := tc.s.Valid(); got != tc.want {
			t.Errorf("%q.Valid() = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestNameFor(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"01936b2e-1f6a-7c3d-9e4f-0a1b2c3d4e5f", "db_01936b2e1f6a7c3d9e4f0a1b2c3d4e5f"},
		{"00000000-0000-0000-0000-000000000000", "db_00000000000000000000000000000000"},
	} {
		if got := NameFor(tc.id); got != tc.want {
			t.Errorf("NameFor(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestLimitsFollowAPlanChange(t *testing.T) {
	l := Limits{Connections: 5, MaxBytes: 1, Version: 3}
	for _, tc := range []struct {
		v    int64
		s    Status
		want bool
	}{
		{4, StatusReady, true},
		{4, StatusReadOnly, true},
		{4, StatusProvisioning, true},
		{3, StatusReady, false},
		{2, StatusReady, false},
		{4, StatusDeleting, false},
		{4, StatusFailed, false},
	} {
		if got := l.Follows(tc.v, tc.s); got != tc.want {
			t.Errorf("Follows(%d, %s) = %v, want %v", tc.v, tc.s, got, tc.want)
		}
	}
}
