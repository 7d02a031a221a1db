package domains

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	p := Policy{PendingTTL: 7 * 24 * time.Hour, PendingEvery: time.Minute, ActiveEvery: 24 * time.Hour, MissingEvery: time.Hour, Grace: 72 * time.Hour}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	pending := func(since time.Duration) Domain {
		return Domain{Hostname: "shop.example.com", Status: StatusPending, PendingSince: ago(since)}
	}
	active := func(missing *time.Time) Domain {
		return Domain{Hostname: "shop.example.com", Status: StatusActive, ActivatedAt: ago(30 * 24 * time.Hour), MissingSince: missing}
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name    string
		d       Domain
		lookup  Lookup
		want    Outcome
		status  string
		missing *time.Time // the miss after the check
		next    time.Time  // the next look-up after the check
	}{
		{"new pending claim without a record", pending(0), RecordMissing, StillPending, StatusPending, nil, now.Add(time.Minute)},
		{"pending claim whose record holds", pending(6 * day), RecordHolds, Activate, StatusActive, nil, now.Add(day)},
		{"pending a moment short of 7 days", pending(7*day - time.Second), RecordMissing, StillPending, StatusPending, nil, now.Add(time.Minute)},
		{"pending 7 days expires", pending(7 * day), RecordMissing, Expire, StatusPending, nil, time.Time{}},
		{"pending 7 days expires even with its record", pending(8 * day), RecordHolds, Expire, StatusPending, nil, time.Time{}},
		{"pending, the look-up failed", pending(day), LookupFailed, StillPending, StatusPending, nil, now.Add(time.Minute)},
		{"active with its record stays active", active(nil), RecordHolds, Verified, StatusActive, nil, now.Add(day)},
		{"active, record just gone: first miss mails", active(nil), RecordMissing, FirstMiss, StatusActive, ago(0), now.Add(time.Hour)},
		{"active, missing 71 h: still served, no mail", active(ago(71 * time.Hour)), RecordMissing, StillMissing, StatusActive, ago(71 * time.Hour), now.Add(time.Hour)},
		{"active, missing 71.5 h: next look-up at the deadline", active(ago(71*time.Hour + 30*time.Minute)), RecordMissing, StillMissing, StatusActive, ago(71*time.Hour + 30*time.Minute), now.Add(30 * time.Minute)},
		{"active, missing 72 h: pending and unserved", active(ago(72 * time.Hour)), RecordMissing, Deactivate, StatusPending, nil, now.Add(time.Minute)},
		{"active, missing 72 h, look-up failed: still deactivated", active(ago(80 * time.Hour)), LookupFailed, Deactivate, StatusPending, nil, now.Add(time.Minute)},
		{"active, missing, record back: the miss clears", active(ago(71 * time.Hour)), RecordHolds, Verified, StatusActive, nil, now.Add(day)},
		{"active, look-up failed: no miss starts", active(nil), LookupFailed, Unknown, StatusActive, nil, now.Add(time.Minute)},
		{"active, missing, look-up failed: the miss runs on", active(ago(time.Hour)), LookupFailed, Unknown, StatusActive, ago(time.Hour), now.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Decide(tc.d, tc.lookup, now)
			if got.Outcome != tc.want {
				t.Fatalf("outcome %s, want %s", got.Outcome, tc.want)
			}
			if tc.want == Expire {
				return
			}
			n := got.Next
			if n.Status != tc.status {
				t.Errorf("status %s, want %s", n.Status, tc.status)
			}
			if !sameTime(n.MissingSince, tc.missing) {
				t.Errorf("missing since %v, want %v", n.MissingSince, tc.missing)
			}
			if n.NextCheckAt == nil || !n.NextCheckAt.Equal(tc.next) {
				t.Errorf("next check %v, want %v", n.NextCheckAt, tc.next)
			}
			switch n.Status {
			case StatusActive:
				if n.ActivatedAt == nil || n.PendingSince != nil {
					t.Errorf("active with activated %v, pending since %v", n.ActivatedAt, n.PendingSince)
				}
			case StatusPending:
				if n.ActivatedAt != nil || n.PendingSince == nil {
					t.Errorf("pending with activated %v, pending since %v", n.ActivatedAt, n.PendingSince)
				}
			}
			if tc.want == Deactivate && !n.PendingSince.Equal(now) {
				t.Errorf("a hostname back to pending gets a fresh %s to verify: pending since %v", p.PendingTTL, n.PendingSince)
			}
		})
	}
}

// A hostname missing its record is mailed about once: only the check that starts the miss is a
// FirstMiss, every later one until the record is back is not.
func TestFirstMissOnlyOnce(t *testing.T) {
	p := DefaultPolicy
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	d := Domain{Status: StatusActive, ActivatedAt: &now}
	var firsts int
	for i := 0; i < 80; i++ {
		dec := p.Decide(d, RecordMissing, now)
		if dec.Outcome == FirstMiss {
			firsts++
		}
		if dec.Outcome == Deactivate {
			if got := now.Sub(*d.MissingSince); got != p.Grace {
				t.Fatalf("deactivated after %s missing, want %s", got, p.Grace)
			}
			if firsts != 1 {
				t.Fatalf("%d first misses before deactivation", firsts)
			}
			return
		}
		d = dec.Next
		now = *d.NextCheckAt
	}
	t.Fatal("never deactivated")
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
