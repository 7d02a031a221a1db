package preview

import "errors"

// Sentinel errors of the preview domain; the HTTP layer maps them in its one place.
var (
	ErrNotFound = errors.New("preview: not found")
	// ErrExpired: the preview expired or was deleted (409 preview_expired).
	ErrExpired = errors.New("preview: expired or deleted")
	// ErrNotReady: the preview is deploying or failed (409 preview_not_ready).
	ErrNotReady = errors.New("preview: not ready")
	// ErrLimit is wrapped by a deploy.LimitError: the plan's previews per app are taken.
	ErrLimit = errors.New("preview: the plan's previews are taken")
)
