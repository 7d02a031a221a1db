package account

import "errors"

// Sentinel errors of the account domain. internal/httpapi/errors.go gives each its status.
var (
	// ErrInvalidEmail: the address is not one a magic link can be sent to.
	ErrInvalidEmail = errors.New("account: invalid email address")
	// ErrNotFound: no such account or user.
	ErrNotFound = errors.New("account: not found")
)
