package domains

import "errors"

// Sentinel errors of custom hostnames; internal/httpapi/errors.go maps them.
var (
	ErrInvalidHostname = errors.New("domains: invalid hostname")
	// ErrStaticOnly: custom hostnames serve static apps only.
	ErrStaticOnly = errors.New("domains: static apps only")
	// ErrDomainLimit: the plan's customDomains are used (wrapped in *accounts.LimitError).
	ErrDomainLimit = errors.New("domains: domain limit reached")
	// ErrHostnameTaken: another app (of any account) has the hostname active.
	ErrHostnameTaken = errors.New("domains: hostname taken")
	// ErrExists: the app already has this hostname.
	ErrExists = errors.New("domains: already on this app")
	// ErrNotFound: the app has no such hostname.
	ErrNotFound = errors.New("domains: not found")
)
