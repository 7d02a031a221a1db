package database

import (
	"errors"
	"testing"
	"time"
)

var (
	allStatuses = []Status{StatusProvisioning, StatusReady, StatusReadOnly, StatusDeleting, StatusFailed}
	allCauses   = []Cause{Created, CreateFailed, OverCap, UnderCap, DeleteAsked}
)

// TestEveryTransition checks the whole matrix of status × cause: exactly the listed moves
// happen, and every other one is refused with ErrTransition and changes nothing.
func TestEveryTransition(t *testing.T) {
	type move struct {
		from  Status
		cause Cause
	}
	want := map[move]Status{
		{StatusProvisioning, Created}:      StatusReady,
		{StatusProvisioning, CreateFailed}: StatusFailed,
		{StatusProvisioning, DeleteAsked}:  StatusDeleting,
		{StatusReady, OverCap}:             StatusReadOnly,
		{StatusReady, DeleteAsked}:         StatusDeleting,
		{StatusReadOnly, UnderCap}:         StatusReady,
		{StatusReadOnly, DeleteAsked}:      StatusDeleting,
		{StatusFailed, DeleteAsked}:        StatusDeleting,
	}
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	for _, from := range allStatuses {
		for _, cause := range allCauses {
			t.Run(string(from)+"/"+string(cause), func(t *testing.T) {
				d := Database{ID: "a", Status: from, Message: "before", UpdatedAt: t0}
				err := d.Apply(cause, now, "report")
				to, allowed := want[move{from, cause}]
				if !allowed {
					if !errors.Is(err, ErrTransition) {
						t.Fatalf("got %v, want ErrTransition", err)
					}
					if d.Status != from || d.Message != "before" || !d.UpdatedAt.Equal(t0) {
						t.Fatalf("a refused move changed the database: %+v", d)
					}
					return
				}
				if err != nil || d.Status != to || !d.UpdatedAt.Equal(now) {
					t.Fatalf("got %v, %s at %v; want %s at %v", err, d.Status, d.UpdatedAt, to, now)
				}
			})
		}
	}
}

// The message says why a database failed or how full a read-only one is, and nothing once
// it is ready again; a delete keeps what was there.
func TestApplySetsTheMessage(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		from    Status
		cause   Cause
		message string
		want    string
	}{
		{StatusProvisioning, Created, "ignored", ""},
		{StatusProvisioning, CreateFailed, "disk full", "disk full"},
		{StatusProvisioning, CreateFailed, "", "the database could not be created"},
		{StatusReady, OverCap, "using 1.1 GB of 1 GB", "using 1.1 GB of 1 GB"},
		{StatusReadOnly, UnderCap, "ignored", ""},
		{StatusFailed, DeleteAsked, "", "before"},
	} {
		d := Database{Status: tc.from, Message: "before"}
		if err := d.Apply(tc.cause, now, tc.message); err != nil || d.Message != tc.want {
			t.Errorf("%s on %s: %v, message %q; want %q", tc.from, tc.cause, err, d.Message, tc.want)
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
