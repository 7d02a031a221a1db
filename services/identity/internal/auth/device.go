package auth

import "time"

// Device flow timing (RFC 8628). Ten minutes is long enough to open the console and sign in
// first; five seconds is the RFC's default polling interval.
const (
	DeviceCodeLifetime = 10 * time.Minute
	DefaultInterval    = 5 * time.Second
)

// GrantStatus is where a device grant stands.
type GrantStatus string

// Device grant states. pending → approved → issued, or pending → denied; issued and denied
// are terminal, and an expired grant can only be refused.
const (
	StatusPending  GrantStatus = "pending"
	StatusApproved GrantStatus = "approved"
	StatusDenied   GrantStatus = "denied"
	StatusIssued   GrantStatus = "issued"
)

// DeviceGrant is one command-line sign-in by device flow.
type DeviceGrant struct {
	ID           string
	DeviceHash   []byte
	UserHash     []byte
	ClientName   string
	Status       GrantStatus
	Interval     time.Duration
	CreatedAt    time.Time
	ExpiresAt    time.Time
	LastPolledAt *time.Time
	AccountID    string // set on approve
	UserID       string // set on approve
	DecidedAt    *time.Time
	TokenID      string // set when the token is issued
}

// NewDeviceGrant starts a grant; the device code goes to the client, the user code to the
// person, and both are kept only as hashes.
func NewDeviceGrant(clientName string, now time.Time) (g DeviceGrant, deviceCode, userCode string) {
	dev := NewSecret("")
	userCode = NewUserCode()
	return DeviceGrant{
		ID:         newID(),
		DeviceHash: dev.Hash,
		UserHash:   Hash(userCode),
		ClientName: clientName,
		Status:     StatusPending,
		Interval:   DefaultInterval,
		CreatedAt:  now,
		ExpiresAt:  now.Add(DeviceCodeLifetime),
	}, dev.Plain, userCode
}

// Expired reports whether the grant is past its lifetime.
func (g DeviceGrant) Expired(now time.Time) bool { return !now.Before(g.ExpiresAt) }

// Poll records a token request at now and says whether a token may be issued (nil). A poll
// sooner than Interval after the last answered one is refused with slow_down, whose
// RetryAfter is the time left until the interval has passed, and does not count as a poll. The
// interval stays as announced (RFC 8628 §3.5 would add 5 seconds): a client that waits
// `interval` between polls, or retryAfter after a slow_down, is never refused. An answered
// poll changes the grant, so the caller saves it whatever Poll returns.
func (g *DeviceGrant) Poll(now time.Time) error {
	if g.LastPolledAt != nil {
		if wait := g.LastPolledAt.Add(g.Interval).Sub(now); wait > 0 {
			return &SlowDownError{RetryAfter: wait}
		}
	}
	g.LastPolledAt = &now
	switch g.Status {
	case StatusIssued, StatusDenied:
		return ErrAccessDenied
	}
	if g.Expired(now) {
		return ErrExpiredToken
	}
	if g.Status == StatusPending {
		return ErrAuthorizationPending
	}
	return nil
}

// Issue records that the token with tokenID was handed out; the device code is spent.
func (g *DeviceGrant) Issue(tokenID string) {
	g.Status = StatusIssued
	g.TokenID = tokenID
}

// Approve lets the device sign in as the given account. Approving again from the same
// account is a harmless repeat (a double click).
func (g *DeviceGrant) Approve(accountID, userID string, now time.Time) error {
	if g.Status == StatusApproved && g.AccountID == accountID {
		return nil
	}
	if err := g.decidable(now); err != nil {
		return err
	}
	g.Status, g.AccountID, g.UserID, g.DecidedAt = StatusApproved, accountID, userID, &now
	return nil
}

// Deny refuses the grant: the device's next poll answers access_denied.
func (g *DeviceGrant) Deny(now time.Time) error {
	if g.Status == StatusDenied {
		return nil
	}
	if err := g.decidable(now); err != nil {
		return err
	}
	g.Status, g.DecidedAt = StatusDenied, &now
	return nil
}

func (g DeviceGrant) decidable(now time.Time) error {
	if g.Status != StatusPending {
		return ErrInvalidUserCode
	}
	if g.Expired(now) {
		return ErrExpiredToken
	}
	return nil
}
