package account

import (
	"time"

	"github.com/google/uuid"
)

// Region is where an account's new apps go when the create request names none.
type Region string

// The regions the contract knows.
const (
	RegionEU Region = "eu"
	RegionUS Region = "us"
)

// DefaultRegion is the region of every new account.
const DefaultRegion = RegionEU

// ParseRegion recognises a region name; ok is false for anything else, which PATCH
// /api/account treats as "no change" rather than as an error.
func ParseRegion(s string) (Region, bool) {
	switch r := Region(s); r {
	case RegionEU, RegionUS:
		return r, true
	}
	return "", false
}

// Account is what a customer owns. Its plan lives with billing; Plan is identity's copy.
type Account struct {
	ID            string
	DefaultRegion Region
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// User is the person who signs in to an account. Each account has exactly one for now.
type User struct {
	ID        string
	AccountID string
	Email     string
	Name      string
	CreatedAt time.Time
}

// New makes the account and user that the first sign-in of email creates. email must
// already be normalised by ParseEmail.
func New(email string, now time.Time) (Account, User) {
	acc := Account{ID: newID(), DefaultRegion: DefaultRegion, CreatedAt: now, UpdatedAt: now}
	u := User{ID: newID(), AccountID: acc.ID, Email: email, Name: NameFromEmail(email), CreatedAt: now}
	return acc, u
}

// SetRegion changes the default region; changed is false when r is already the default, so
// the caller publishes an update only for a real change.
func (a *Account) SetRegion(r Region, now time.Time) (changed bool) {
	if a.DefaultRegion == r {
		return false
	}
	a.DefaultRegion = r
	a.UpdatedAt = now
	return true
}

// newID gives a UUIDv7, sortable by creation as the conventions ask.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
