package team

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/contract/names"
)

// MaxNameLen is the longest team name, in characters.
const MaxNameLen = 100

// slugBaseLen bounds the part of a derived slug taken from the name, leaving room for a
// suffix within names.SlugMaxLen.
const slugBaseLen = 40

// Team is a group of people that owns apps, a plan and an audit log. A personal team's id is
// its account's, so everything keyed by account id is keyed by the owning team already.
type Team struct {
	ID             string
	Slug           string
	Name           string
	Personal       bool
	OwnerAccountID string // the account that created it
	CreatedAt      time.Time
}

// View is a team as one of its members sees it: with the member's role and the team's plan.
type View struct {
	Team
	Role access.Role
	Plan string
}

// New makes a team created by the person of account ownerAccountID. slug is already valid.
func New(name, slug, ownerAccountID string, now time.Time) Team {
	return Team{ID: uuid.Must(uuid.NewV7()).String(), Slug: slug, Name: name, OwnerAccountID: ownerAccountID, CreatedAt: now}
}

// NewPersonal makes the personal team of a new account: its id the account's, named after its
// person.
func NewPersonal(accountID, personName, slug string, now time.Time) Team {
	return Team{ID: accountID, Slug: slug, Name: personName, Personal: true, OwnerAccountID: accountID, CreatedAt: now}
}

// ParseName trims a requested name and checks it: 1 to MaxNameLen characters, none of them
// control characters (the name goes into mails).
func ParseName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxNameLen {
		return "", ErrInvalidName
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "", ErrInvalidName
		}
	}
	return s, nil
}

// ParseSlug checks a requested slug: the app slug's shape (contract/names).
func ParseSlug(s string) (string, error) {
	if !names.ValidSlug(s) {
		return "", ErrInvalidSlug
	}
	return s, nil
}

// SlugCandidate is the attempt'th slug to try for a team named name: the name's letters and
// digits with dashes between runs (at most slugBaseLen of them, "team" when none are left),
// then, when that is taken, the same with a random suffix.
func SlugCandidate(name string, attempt int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	base := strings.Trim(b.String()[:min(b.Len(), slugBaseLen)], "-")
	if base == "" {
		base = "team"
	}
	if attempt == 0 {
		return base
	}
	var suffix [3]byte
	_, _ = rand.Read(suffix[:]) // crypto/rand.Read never fails
	return base + "-" + hex.EncodeToString(suffix[:])
}

// MaxSlugAttempts bounds the tries for a free derived slug; six random hex digits make a
// collision past a few tries all but impossible.
const MaxSlugAttempts = 8

// ParseRole reads a role name.
func ParseRole(s string) (access.Role, error) {
	r, ok := access.ParseRole(s)
	if !ok {
		return access.NoRole, ErrInvalidRole
	}
	return r, nil
}
