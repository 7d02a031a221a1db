package mirror

import (
	"testing"
	"time"

	"tori.dev/services/billing/internal/catalog"
)

func sub(id string, plan catalog.Name, status string, created int64) Subscription {
	return Subscription{ID: id, Plan: plan, Status: status, Created: time.Unix(created, 0)}
}

func TestPlanAndSubscribed(t *testing.T) {
	cases := []struct {
		name       string
		subs       []Subscription
		plan       catalog.Name
		decides    bool
		subscribed bool
		current    string
	}{
		{"no subscription", nil, "", false, false, ""},
		{"active", []Subscription{sub("a", catalog.Songbird, StatusActive, 1)}, catalog.Songbird, true, true, "a"},
		{"trialing", []Subscription{sub("a", catalog.Flock, StatusTrialing, 1)}, catalog.Flock, true, true, "a"},
		{"past due keeps the plan", []Subscription{sub("a", catalog.Flock, StatusPastDue, 1)}, catalog.Flock, true, true, "a"},
		{"unpaid falls back to nestling but stays subscribed", []Subscription{sub("a", catalog.Flock, StatusUnpaid, 1)}, catalog.Nestling, true, true, "a"},
		{"canceled", []Subscription{sub("a", catalog.Flock, StatusCanceled, 1)}, catalog.Nestling, true, false, "a"},
		{"incomplete expired", []Subscription{sub("a", catalog.Flock, StatusIncompleteExpired, 1)}, catalog.Nestling, true, false, "a"},
		{"a new one after a canceled one", []Subscription{sub("old", catalog.Flock, StatusCanceled, 1), sub("new", catalog.Songbird, StatusActive, 2)}, catalog.Songbird, true, true, "new"},
		{"a live older one outranks a newer ended one", []Subscription{sub("live", catalog.Songbird, StatusActive, 1), sub("gone", catalog.Flock, StatusCanceled, 2)}, catalog.Songbird, true, true, "live"},
		{"the newest of two ended", []Subscription{sub("a", catalog.Songbird, StatusCanceled, 1), sub("b", catalog.Flock, StatusCanceled, 2)}, catalog.Nestling, true, false, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, decides := Plan(tc.subs)
			if plan != tc.plan || decides != tc.decides {
				t.Fatalf("Plan = %q, %v; want %q, %v", plan, decides, tc.plan, tc.decides)
			}
			if got := Subscribed(tc.subs); got != tc.subscribed {
				t.Fatalf("Subscribed = %v", got)
			}
			if cur, _ := Current(tc.subs); cur.ID != tc.current {
				t.Fatalf("Current = %q, want %q", cur.ID, tc.current)
			}
		})
	}
}
