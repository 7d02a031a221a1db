package env

import "errors"

// Sentinel errors of environment variables; internal/httpapi/errors.go maps them.
var (
	// ErrInvalidKey: the name does not match ^[A-Z][A-Z0-9_]*$ or is too long.
	ErrInvalidKey = errors.New("env: invalid key")
	// ErrInvalidValue: not a string, over MaxValueBytes, or holding a NUL.
	ErrInvalidValue = errors.New("env: invalid value")
	// ErrNotSet: the app has no such variable.
	ErrNotSet = errors.New("env: not set")
	// ErrAppGone: the app does not exist or is deleted (a request/reply caller's view).
	ErrAppGone = errors.New("env: app not found")
	// ErrSealed: a sealed snapshot does not open for this app and deploy.
	ErrSealed = errors.New("env: snapshot does not open")
)
