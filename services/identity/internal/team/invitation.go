package team

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/access"
)

// InvitationLifetime is how long an invitation link works.
const InvitationLifetime = 7 * 24 * time.Hour

// Invitation asks a person, by address, to join a team with a role. Its code goes into the
// mail and nowhere else; only its hash is kept.
type Invitation struct {
	ID         string
	TeamID     string
	Email      string
	Role       access.Role
	Hash       []byte
	InvitedBy  string // the inviting user's id
	CreatedAt  time.Time
	ExpiresAt  time.Time
	AcceptedAt *time.Time
	RevokedAt  *time.Time
}

// NewInvitation makes an invitation to teamID for email (already normalised) and its code.
func NewInvitation(teamID, email string, role access.Role, invitedBy string, now time.Time) (Invitation, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	code := base64.RawURLEncoding.EncodeToString(b)
	return Invitation{
		ID: uuid.Must(uuid.NewV7()).String(), TeamID: teamID, Email: email, Role: role,
		Hash: HashCode(code), InvitedBy: invitedBy, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime),
	}, code
}

// HashCode is the stored form of an invitation code (256 random bits: a plain SHA-256 is
// enough, as for every other secret identity keeps).
func HashCode(code string) []byte {
	h := sha256.Sum256([]byte(code))
	return h[:]
}

// Pending reports whether the invitation may still be accepted.
func (i Invitation) Pending(now time.Time) bool {
	return i.AcceptedAt == nil && i.RevokedAt == nil && now.Before(i.ExpiresAt)
}

// Accept uses the invitation once, for the person signed in as email: a used or withdrawn
// code is ErrInvalidInvitation (like an unknown one), an old one ErrInvitationExpired, and
// one sent to another address ErrEmailMismatch (which does not use it up).
func (i *Invitation) Accept(email string, now time.Time) error {
	if i.AcceptedAt != nil || i.RevokedAt != nil {
		return ErrInvalidInvitation
	}
	if !now.Before(i.ExpiresAt) {
		return ErrInvitationExpired
	}
	if i.Email != email {
		return ErrEmailMismatch
	}
	i.AcceptedAt = &now
	return nil
}

// Plan limits on teams.
const (
	// NestlingMembers is the members limit of a team whose plan copy has not arrived yet: a
	// new team starts on nestling.
	NestlingMembers = 3
	// NestlingPlan is the free plan's name.
	NestlingPlan = "nestling"
	// MaxOwnedNestlingTeams is how many teams besides their personal one a person may own on
	// the free plan, so free quotas do not multiply.
	MaxOwnedNestlingTeams = 1
)

// MemberLimit is the members limit of a team whose plan copy says limit (0 when the copy has
// no such limit yet or is missing: the team is on nestling until billing says otherwise).
func MemberLimit(limit int64) int64 {
	if limit <= 0 {
		return NestlingMembers
	}
	return limit
}

// MayAddMember checks that one more (member or pending invitation) fits: members and pending
// count what the team has already.
func MayAddMember(members, pending int, limit int64, plan string) error {
	if int64(members+pending) >= limit {
		return &LimitError{Code: CodeMemberLimit, Limit: limit, Plan: plan}
	}
	return nil
}
