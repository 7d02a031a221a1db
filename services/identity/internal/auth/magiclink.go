package auth

import "time"

// MagicLinkLifetime is how long a sign-in link works, as decisions.md fixes.
const MagicLinkLifetime = 15 * time.Minute

// MagicLink is a sign-in code mailed to an address.
type MagicLink struct {
	Hash      []byte
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NewMagicLink makes a code for email; the code goes into the mail and nowhere else.
func NewMagicLink(email string, now time.Time) (MagicLink, string) {
	// No prefix: the code travels in a URL and is never presented as a bearer token.
	sec := NewSecret("")
	return MagicLink{Hash: sec.Hash, Email: email, CreatedAt: now, ExpiresAt: now.Add(MagicLinkLifetime)}, sec.Plain
}

// Redeem uses the code once. Used and expired codes are ErrInvalidToken, like unknown ones,
// so the answer tells an attacker nothing.
func (m *MagicLink) Redeem(now time.Time) error {
	if m.UsedAt != nil || !now.Before(m.ExpiresAt) {
		return ErrInvalidToken
	}
	m.UsedAt = &now
	return nil
}
