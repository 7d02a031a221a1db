package accounts

import "errors"

var (
	// ErrNotFound means billing has no record of the account.
	ErrNotFound = errors.New("accounts: account not found")
	// ErrAmbiguous means an email address names more than one account.
	ErrAmbiguous = errors.New("accounts: email names more than one account")
	// ErrInvalidID means an account id is not a UUID.
	ErrInvalidID = errors.New("accounts: account id is not a UUID")
	// ErrInvalidRef means a string is neither an account id nor an email address.
	ErrInvalidRef = errors.New("accounts: neither an account id nor an email address")
)
