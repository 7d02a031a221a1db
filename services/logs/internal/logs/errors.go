package logs

import (
	"errors"
	"fmt"
)

// ErrNotFound means the caller has no live app of that slug: unknown, another account's, or
// deleted. The three are indistinguishable on purpose.
var ErrNotFound = errors.New("logs: app not found")

// ErrBeyondRetention means the requested start is older than the account's plan keeps logs.
var ErrBeyondRetention = errors.New("logs: start is older than the retention")

// InvalidParameterError names the query parameter that broke a rule and why.
type InvalidParameterError struct {
	Name   string
	Reason string
}

func (e *InvalidParameterError) Error() string {
	return fmt.Sprintf("%s: %s", e.Name, e.Reason)
}

func invalid(name, format string, args ...any) error {
	return &InvalidParameterError{Name: name, Reason: fmt.Sprintf(format, args...)}
}

// ErrPlanUnavailable means the account's plan is not on record here and billing could not
// say what it is; nothing guesses a retention in its place.
var ErrPlanUnavailable = errors.New("logs: account plan unavailable")

// ErrAppUnavailable means the app is not in this service's copy and the apps service could
// not say whether it exists; a 404 then might be false, so nothing answers one.
var ErrAppUnavailable = errors.New("logs: app lookup unavailable")
