package env

import "errors"

// Sentinel errors of environment variables; internal/httpapi/errors.go maps them.
var (
	// ErrInvalidKey: the name does not match names.EnvKeyPattern or is too long.
	ErrInvalidKey = errors.New("env: invalid key")
	// ErrInvalidValue: not a string, over MaxValueBytes, or holding a NUL.
	ErrInvalidValue = errors.New("env: invalid value")
	// ErrInvalidChange: a change of several variables that names none, names over
	// MaxChangeKeys on a side, or both sets and removes one name.
	ErrInvalidChange = errors.New("env: invalid change")
	// ErrNotSet: the app has no such variable.
	ErrNotSet = errors.New("env: not set")
	// ErrAppGone: the app does not exist or is deleted (a request/reply caller's view).
	ErrAppGone = errors.New("env: app not found")
	// ErrSealed: a sealed snapshot does not open for this app and deploy.
	ErrSealed = errors.New("env: snapshot does not open")
	// ErrNotHosted: the zone asking to open a snapshot does not host that deploy now (not
	// its zone, or the deploy ended), or the snapshot is not the one that deploy uses.
	ErrNotHosted = errors.New("env: deploy not hosted by the asking zone")
	// ErrVarLimit: the app holds MaxVarsPerApp variables already (wrapped in an
	// *accounts.LimitError, which names the account's plan).
	ErrVarLimit = errors.New("env: variable limit reached")
)

// Sentinel errors of sealing, which every keyring (internal/keyring) returns: they are the
// domain's, so the use cases can tell a snapshot that does not open from a keyring failure.
var (
	// ErrUnknownKey means the keyring does not have the key a ciphertext names.
	ErrUnknownKey = errors.New("keyring: unknown key")
	// ErrDecrypt means the ciphertext does not open: tampered, or bound to other data.
	ErrDecrypt = errors.New("keyring: ciphertext does not open with this associated data")
)
