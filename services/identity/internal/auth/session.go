package auth

import (
	"time"

	"github.com/google/uuid"
)

// SessionLifetime is how long a console sign-in lasts. Thirty days, fixed from sign-in and not
// extended by use, like the sessions of the hosting consoles customers know; logout ends one
// earlier.
const SessionLifetime = 30 * 24 * time.Hour

// Session is a signed-in console session.
type Session struct {
	ID        string
	AccountID string
	UserID    string
	Hash      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// NewSession starts a session for the user; the token is returned once.
func NewSession(accountID, userID string, now time.Time) (Session, string) {
	sec := NewSecret(SessionPrefix)
	return Session{
		ID:        newID(),
		AccountID: accountID,
		UserID:    userID,
		Hash:      sec.Hash,
		CreatedAt: now,
		ExpiresAt: now.Add(SessionLifetime),
	}, sec.Plain
}

// Active reports whether the session still authenticates.
func (s Session) Active(now time.Time) bool {
	return s.RevokedAt == nil && now.Before(s.ExpiresAt)
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }
