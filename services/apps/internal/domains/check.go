package domains

import "time"

// Policy is the life of a claim after it is made: how long a pending claim may wait for its
// record, how often an active hostname's record is looked up again, and how long a record
// may be missing before the hostname stops being served.
type Policy struct {
	// PendingTTL: a claim still pending this long after PendingSince is removed.
	PendingTTL time.Duration
	// PendingEvery is the time between look-ups of a pending claim.
	PendingEvery time.Duration
	// ActiveEvery is the time between re-checks of an active hostname whose record holds.
	ActiveEvery time.Duration
	// MissingEvery is the time between look-ups of an active hostname whose record is
	// missing, so a record put back clears the miss soon.
	MissingEvery time.Duration
	// Grace is how long an active hostname's record may be missing before the hostname goes
	// back to pending and stops being served.
	Grace time.Duration
}

// DefaultPolicy is the documented default: 7 days to verify, daily re-checks, 72 hours of
// grace.
var DefaultPolicy = Policy{
	PendingTTL:   7 * 24 * time.Hour,
	PendingEvery: 30 * time.Second,
	ActiveEvery:  24 * time.Hour,
	MissingEvery: time.Hour,
	Grace:        72 * time.Hour,
}

// Lookup is what one look-up of the TXT record found.
type Lookup int

const (
	// RecordHolds: a TXT record under the challenge name has the claim's value.
	RecordHolds Lookup = iota
	// RecordMissing: the name does not exist, or none of its records has the value.
	RecordMissing
	// LookupFailed: no answer within the look-up's timeout; it says nothing about the
	// record, so it neither starts nor clears a miss.
	LookupFailed
)

// Outcome is what a check does to a hostname.
type Outcome int

const (
	// StillPending: not verified yet; looked up again later.
	StillPending Outcome = iota
	// Activate: the record holds; the hostname becomes active and is served.
	Activate
	// Expire: pending for PendingTTL; the claim is removed and the hostname is free.
	Expire
	// Verified: an active hostname's record holds; any miss is cleared.
	Verified
	// FirstMiss: an active hostname's record has just gone missing; the owner is mailed.
	FirstMiss
	// StillMissing: missing for less than Grace; still served.
	StillMissing
	// Deactivate: missing for Grace; the hostname is pending again and no longer served.
	Deactivate
	// Unknown: the look-up failed; nothing changes but the time of the next look-up.
	Unknown
)

var outcomeNames = [...]string{"still_pending", "activate", "expire", "verified", "first_miss", "still_missing", "deactivate", "unknown"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome?"
}

// Decision is an outcome with the hostname's state after it.
type Decision struct {
	Outcome Outcome
	// Next is the hostname as it is after the check (meaningless for Expire).
	Next Domain
}

// Expired reports whether a pending claim has waited PendingTTL: it is removed without a
// look-up.
func (p Policy) Expired(d Domain, now time.Time) bool {
	return d.Status == StatusPending && d.PendingSince != nil && !now.Before(d.PendingSince.Add(p.PendingTTL))
}

// DeactivateAt is when an active hostname missing since since stops being served.
func (p Policy) DeactivateAt(since time.Time) time.Time { return since.Add(p.Grace) }

// Decide applies a look-up made at now to d.
func (p Policy) Decide(d Domain, l Lookup, now time.Time) Decision {
	next := d
	at := func(t time.Time) *time.Time { return &t }
	if d.Status == StatusPending {
		if p.Expired(d, now) {
			return Decision{Outcome: Expire, Next: next}
		}
		if l == RecordHolds {
			next.Status, next.ActivatedAt, next.PendingSince, next.MissingSince = StatusActive, at(now), nil, nil
			next.NextCheckAt = at(now.Add(p.ActiveEvery))
			return Decision{Outcome: Activate, Next: next}
		}
		next.NextCheckAt = at(now.Add(p.PendingEvery))
		return Decision{Outcome: StillPending, Next: next}
	}

	switch {
	case l == RecordHolds:
		next.MissingSince = nil
		next.NextCheckAt = at(now.Add(p.ActiveEvery))
		return Decision{Outcome: Verified, Next: next}
	case d.MissingSince != nil && !now.Before(p.DeactivateAt(*d.MissingSince)):
		// Missing since the grace began and never seen since: a failed look-up now does not
		// buy more time.
		next.Status, next.ActivatedAt, next.PendingSince, next.MissingSince = StatusPending, nil, at(now), nil
		next.NextCheckAt = at(now.Add(p.PendingEvery))
		return Decision{Outcome: Deactivate, Next: next}
	case l == LookupFailed:
		next.NextCheckAt = at(now.Add(p.PendingEvery))
		return Decision{Outcome: Unknown, Next: next}
	case d.MissingSince == nil:
		next.MissingSince = at(now)
		next.NextCheckAt = at(p.soonest(now.Add(p.MissingEvery), p.DeactivateAt(now)))
		return Decision{Outcome: FirstMiss, Next: next}
	default:
		next.NextCheckAt = at(p.soonest(now.Add(p.MissingEvery), p.DeactivateAt(*d.MissingSince)))
		return Decision{Outcome: StillMissing, Next: next}
	}
}

// soonest keeps a missing hostname's next look-up no later than its deactivation, so it
// stops being served on time whatever MissingEvery is.
func (Policy) soonest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
