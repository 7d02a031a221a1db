package apps

import "errors"

// Sentinel errors of the app lifecycle; internal/httpapi/errors.go maps them to responses.
var (
	// ErrNotFound covers an unknown slug, another account's app and a deleted app alike, so
	// nobody learns which slugs other accounts use.
	ErrNotFound = errors.New("apps: not found")
	// ErrInvalidSlug: a requested name does not match the contract's names.SlugPattern.
	ErrInvalidSlug = errors.New("apps: invalid slug")
	// ErrSlugTaken: reserved, used by a live app, or held by a tombstone not yet reclaimed.
	ErrSlugTaken = errors.New("apps: slug taken")
	// ErrInvalidRegion: a requested region is neither eu nor us.
	ErrInvalidRegion = errors.New("apps: invalid region")
	// ErrAppLimit: the plan allows no further app (wrapped in an *accounts.LimitError).
	ErrAppLimit = errors.New("apps: app limit reached")
	// ErrSlugSpaceExhausted: no free generated slug was found; practically unreachable.
	ErrSlugSpaceExhausted = errors.New("apps: no free generated slug")
)
