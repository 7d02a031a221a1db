package certs

import "time"

// Statuses of a hostname's certificate, as GET /api/apps/{slug}/domains shows them.
const (
	StatusPending = "pending"
	StatusIssued  = "issued"
	StatusFailed  = "failed"
)

// State is what the zone tells the control plane of one hostname's certificate.
type State struct {
	Status    string
	ExpiresAt time.Time // zero: none held
	LastError string
}

// Step is one thing that happened to a hostname's certificate.
type Step int

const (
	// Ordering: an order (new or renewal) starts.
	Ordering Step = iota + 1
	// Obtained: a certificate was issued, or found in the zone's storage.
	Obtained
	// Failed: the CA refused or the validation failed.
	Failed
	// Limited: the order was refused by the zone's or the account's order rate and waits.
	Limited
)

// Event is a Step with what it carries.
type Event struct {
	Step     Step
	NotAfter time.Time // Obtained: the certificate's end
	Err      string    // Failed, Limited: why
	At       time.Time
}

// Next is the certificate's state after e. The rule:
//   - a certificate held and not expired keeps the status issued whatever happens to its
//     renewal; a renewal's failure shows as lastError beside it;
//   - Obtained is issued with the new end and no error;
//   - with none held, a failure is failed; an order or a wait after a failure stays failed
//     (the edge retries with backoff; the owner was told once, and is not told again until
//     a certificate was issued in between); a wait for the order rate before any failure is
//     pending with the reason.
func Next(prev State, e Event) State {
	held := prev.Status == StatusIssued && e.At.Before(prev.ExpiresAt)
	switch e.Step {
	case Obtained:
		return State{Status: StatusIssued, ExpiresAt: e.NotAfter}
	case Failed, Limited:
		if held {
			return State{Status: StatusIssued, ExpiresAt: prev.ExpiresAt, LastError: e.Err}
		}
		if e.Step == Failed || prev.Status == StatusFailed {
			return State{Status: StatusFailed, LastError: e.Err}
		}
		return State{Status: StatusPending, LastError: e.Err}
	default: // Ordering
		if held {
			return prev
		}
		if prev.Status == StatusFailed {
			return State{Status: StatusFailed, LastError: prev.LastError}
		}
		return State{Status: StatusPending, LastError: prev.LastError}
	}
}
