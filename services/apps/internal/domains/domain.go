package domains

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"tori.dev/contract/names"
)

// Statuses of a hostname.
const (
	StatusPending = "pending"
	StatusActive  = "active"
)

// ChallengePrefix is the label under which the verification TXT record lives (the
// contract's, which identity checks a record's name against).
const ChallengePrefix = names.ChallengePrefix

// Domain is a custom hostname of an app.
type Domain struct {
	ID          string
	AppID       string
	Hostname    string
	Status      string
	Token       string // the TXT record's expected value
	CreatedAt   time.Time
	ActivatedAt *time.Time
	// PendingSince is when the claim became pending (its creation, or the return of an
	// active hostname to pending); the claim expires PendingTTL after it. Nil when active.
	PendingSince *time.Time
	// MissingSince is when the re-check of an active hostname first found its record
	// missing; nil while the record holds.
	MissingSince *time.Time
	// NextCheckAt is when the checker looks the record up again; nil means at once.
	NextCheckAt *time.Time
	// Certificate is the edge's certificate for the hostname (certificate.go).
	Certificate Certificate
}

// Verification is the TXT record that proves control of the hostname.
type Verification struct {
	Type  string
	Name  string
	Value string
}

// Verification returns the record the owner must publish.
func (d Domain) Verification() Verification {
	return Verification{Type: "TXT", Name: ChallengePrefix + d.Hostname, Value: d.Token}
}

// NewToken is a fresh verification value: 128 random bits, so nobody can guess another
// claim's record.
func NewToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return names.VerificationPrefix + hex.EncodeToString(b)
}
