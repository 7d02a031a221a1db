package certs

import (
	"errors"
	"testing"
	"time"
)

// The budget rule, step by step on a clock of the test's: renewals never count against an
// account and keep a reserve new orders cannot take; an account's new orders stop at its cap
// over 24 hours; a refusal takes nothing.
func TestBudgetRule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type order struct {
		renewal bool
		account string
		at      time.Duration // after t0
		want    error
		reason  string
	}
	for _, tc := range []struct {
		name         string
		perHour, cap int
		orders       []order
	}{
		{name: "an account stops at its cap, another goes on", perHour: 400, cap: 2, orders: []order{
			{account: "a"}, {account: "a"},
			{account: "a", want: ErrAccountOrderLimit, reason: reasonAccountDailyCap},
			{account: "b"},
		}},
		{name: "a renewal never counts against the account's cap", perHour: 400, cap: 1, orders: []order{
			{account: "a"},
			{account: "a", want: ErrAccountOrderLimit, reason: reasonAccountDailyCap},
			{renewal: true, account: "a"}, {renewal: true, account: "a"},
			{account: "a", want: ErrAccountOrderLimit, reason: reasonAccountDailyCap},
		}},
		{name: "the cap is over the last 24 hours", perHour: 400, cap: 1, orders: []order{
			{account: "a"},
			{account: "a", at: 23 * time.Hour, want: ErrAccountOrderLimit, reason: reasonAccountDailyCap},
			{account: "a", at: 24 * time.Hour},
			{account: "a", at: 24*time.Hour + time.Minute, want: ErrAccountOrderLimit, reason: reasonAccountDailyCap},
		}},
		// 40 an hour: 10 kept for renewals (a burst of 1), 30 for new orders (a burst of 3).
		{name: "new orders cannot take the renewals' reserve", perHour: 40, orders: []order{
			{account: "a"}, {account: "b"}, {account: "c"},
			{account: "d", want: ErrOrderLimit, reason: reasonZoneBudget},
			{renewal: true, account: "a"},
			{renewal: true, account: "b", want: ErrOrderLimit, reason: reasonZoneBudget},
		}},
		{name: "a renewal uses what new orders leave", perHour: 40, orders: []order{
			{renewal: true}, {renewal: true}, {renewal: true}, {renewal: true},
			{renewal: true, want: ErrOrderLimit, reason: reasonZoneBudget},
			{account: "a", want: ErrOrderLimit, reason: reasonZoneBudget},
		}},
		{name: "a refusal by the zone does not count against the account", perHour: 40, cap: 1, orders: []order{
			{account: "x"}, {account: "y"}, {account: "z"},
			{account: "a", want: ErrOrderLimit, reason: reasonZoneBudget},
			// 30 an hour refills one in two minutes.
			{account: "a", at: 2 * time.Minute},
		}},
		{name: "an unknown account is held to the zone's budget only", perHour: 400, cap: 1, orders: []order{
			{}, {}, {},
		}},
		{name: "no bounds", orders: []order{{account: "a"}, {account: "a"}, {renewal: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBudget(tc.perHour, tc.cap, t0)
			for i, o := range tc.orders {
				reason, err := b.allow(o.renewal, o.account, t0.Add(o.at))
				if !errors.Is(err, o.want) || (o.want == nil && err != nil) || reason != o.reason {
					t.Fatalf("order %d (%+v): %v %q, want %v %q", i, o, err, reason, o.want, o.reason)
				}
			}
		})
	}
}
