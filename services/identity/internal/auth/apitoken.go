package auth

import (
	"strings"
	"time"
	"unicode/utf8"
)

// LastUsedResolution is how stale lastUsedAt may be. The gateway introspects on every cache
// miss; writing the row each time would turn reads into writes, so one write a minute per
// token is enough for a "last used" column.
const LastUsedResolution = time.Minute

// maxNameLen bounds a token's label.
const maxNameLen = 100

// APIToken is a token for scripts and the command-line client. A full token (the seed's)
// acts with its creator's role in each of their teams and ends only when revoked; a scoped
// one (Scoped) acts in one team, limited by its scope and pinned apps, until ExpiresAt.
type APIToken struct {
	ID         string
	AccountID  string
	UserID     string
	Name       string
	Prefix     string
	Hash       []byte
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time

	// Scoped tokens only (scoped.go); zero for a full token.
	TeamID    string
	TeamSlug  string   // read from the team, for the JSON; not stored on the token
	Scope     string   // read, deploy, write or admin
	Apps      []string // nil: every app of the team
	ExpiresAt *time.Time
}

// ParseTokenName trims a token label and checks it is 1 to 100 characters.
func ParseTokenName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > maxNameLen || !utf8.ValidString(s) {
		return "", ErrInvalidName
	}
	return s, nil
}

// NewAPIToken makes a token; its secret is returned once and never again.
func NewAPIToken(accountID, userID, name string, now time.Time) (APIToken, string) {
	sec := NewSecret(APIPrefix)
	return APIToken{
		ID:        newID(),
		AccountID: accountID,
		UserID:    userID,
		Name:      name,
		Prefix:    DisplayPrefix(sec.Plain),
		Hash:      sec.Hash,
		CreatedAt: now,
	}, sec.Plain
}

// Active reports whether the token still authenticates.
func (t APIToken) Active() bool { return t.RevokedAt == nil }

// NeedsTouch reports whether a use at now should be written to lastUsedAt.
func (t APIToken) NeedsTouch(now time.Time) bool {
	return t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= LastUsedResolution
}
