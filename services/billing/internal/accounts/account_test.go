package accounts

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
)

func TestNewAccountsStartOnTheDefaultPlanAtVersionOne(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	now := time.Now()
	a := New(id, "ada@example.com", now)
	if a.ID != id || a.Plan != catalog.Nestling || a.Version != 1 || !a.UpdatedAt.Equal(now) {
		t.Fatalf("new account %+v", a)
	}
	if u := Unrecorded(id); u.Plan != catalog.Nestling || u.Version != 0 {
		t.Fatalf("unrecorded account %+v: want nestling at version 0", u)
	}
}

func TestChangePlan(t *testing.T) {
	start := New(uuid.Must(uuid.NewV7()), "ada@example.com", time.Unix(1, 0))
	later := time.Unix(2, 0)
	cases := []struct {
		to          catalog.Name
		changed     bool
		wantVersion int64
	}{
		{catalog.Songbird, true, 2},
		{catalog.Flock, true, 2},
		{catalog.Nestling, false, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.to), func(t *testing.T) {
			next, changed := start.ChangePlan(tc.to, later)
			if changed != tc.changed || next.Version != tc.wantVersion || next.Plan != tc.to {
				t.Fatalf("ChangePlan(%s) = %+v, %v", tc.to, next, changed)
			}
			if changed && !next.UpdatedAt.Equal(later) {
				t.Fatalf("UpdatedAt %v, want %v", next.UpdatedAt, later)
			}
			if !changed && next != start {
				t.Fatalf("a no-op changed the account: %+v", next)
			}
		})
	}
	if start.Plan != catalog.Nestling || start.Version != 1 {
		t.Fatal("ChangePlan modified its receiver")
	}
}

func TestParseRef(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	cases := []struct {
		in   string
		want Ref
		err  error
	}{
		{id.String(), Ref{ID: id}, nil},
		{" " + id.String() + "\n", Ref{ID: id}, nil},
		{"ada@example.com", Ref{Email: "ada@example.com"}, nil},
		{"ada", Ref{}, ErrInvalidRef},
		{"@example.com", Ref{}, ErrInvalidRef},
		{"ada@", Ref{}, ErrInvalidRef},
		{"", Ref{}, ErrInvalidRef},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRef(tc.in)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("ParseRef(%q) = %+v, %v; want %+v, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	if got, err := ParseID(id.String()); err != nil || got != id {
		t.Fatalf("ParseID(valid) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "acc_1", "not-a-uuid"} {
		if _, err := ParseID(bad); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ParseID(%q): got %v, want ErrInvalidID", bad, err)
		}
	}
}
