package auth

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the credential domain. internal/httpapi/errors.go gives each its status
// and code; the comments say which condition each stands for.
var (
	// ErrNotFound: no credential or grant with that secret or id (store lookups).
	ErrNotFound = errors.New("auth: not found")
	// ErrInvalidToken: a magic-link code that is unknown, used or expired.
	ErrInvalidToken = errors.New("auth: invalid magic-link code")
	// ErrUnauthorized: a bearer token that is unknown, revoked or expired.
	ErrUnauthorized = errors.New("auth: unauthorized")
	// ErrSessionRequired: the operation mints or ends credentials, which an API token may not.
	ErrSessionRequired = errors.New("auth: a session token is required")
	// ErrInvalidName: an API token name that is empty or too long.
	ErrInvalidName = errors.New("auth: invalid token name")

	// ErrUnknownCode: a device code or authorization code nobody issued. Only these count
	// against the caller's address at the gateway.
	ErrUnknownCode = errors.New("auth: unknown grant code")
	// ErrInvalidGrant: a known authorization code that is used, or whose verifier or
	// redirect URI does not match.
	ErrInvalidGrant = errors.New("auth: invalid grant")
	// ErrInvalidRequest: a token or authorize request missing or mixing its parameters.
	ErrInvalidRequest = errors.New("auth: invalid request")
	// ErrAuthorizationPending: the device grant has not been approved yet.
	ErrAuthorizationPending = errors.New("auth: authorization pending")
	// ErrExpiredToken: the device code or authorization code is past its lifetime.
	ErrExpiredToken = errors.New("auth: expired token")
	// ErrAccessDenied: the device grant was denied, or its token was already issued.
	ErrAccessDenied = errors.New("auth: access denied")
	// ErrSlowDown: the device code was polled faster than its interval; see SlowDownError.
	ErrSlowDown = errors.New("auth: slow down")
	// ErrInvalidUserCode: approve or deny named a user code that is unknown or already decided.
	ErrInvalidUserCode = errors.New("auth: invalid user code")
	// ErrInvalidRedirectURI: the loopback redirect URI is not a loopback http URI with a port.
	ErrInvalidRedirectURI = errors.New("auth: invalid redirect uri")
)

// SlowDownError is ErrSlowDown with the wait the client owes before its next poll.
type SlowDownError struct{ RetryAfter time.Duration }

func (e *SlowDownError) Error() string {
	return fmt.Sprintf("auth: slow down, retry after %s", e.RetryAfter)
}

// Is makes errors.Is(err, ErrSlowDown) true.
func (e *SlowDownError) Is(target error) bool { return target == ErrSlowDown }
