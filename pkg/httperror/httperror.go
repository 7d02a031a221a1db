// Package httperror is the contract's error body and the one place where an error becomes an
// HTTP response. Services translate their domain's sentinel errors into *Error values in a
// single mapping of their own; anything that arrives here untranslated is a 500 with a fixed
// body, and its detail goes only to the log.
package httperror

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Body is the JSON error shape of the public contract. Optional members are omitted when unset.
type Body struct {
	Error   string `json:"error"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Field names the request member an invalid_parameter is about.
	Field             string  `json:"field,omitempty"`
	Limit             *int64  `json:"limit,omitempty"`
	Plan              string  `json:"plan,omitempty"`
	RetryAfter        *int    `json:"retryAfter,omitempty"`
	RetryAfterSeconds *int    `json:"retryAfterSeconds,omitempty"`
	BlockingDeployID  *string `json:"blockingDeployId,omitempty"`
	Hold              any     `json:"hold,omitempty"`
	// Type names the process type a formation change gave that the app does not run.
	Type string `json:"type,omitempty"`
	// RequiredRole and RequiredScope name what an insufficient_role or insufficient_scope
	// refusal would have needed.
	RequiredRole  string `json:"requiredRole,omitempty"`
	RequiredScope string `json:"requiredScope,omitempty"`
}

// Error is an HTTP error ready to be written.
type Error struct {
	Status int
	Body   Body
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s", e.Status, e.Body.Error)
}

// New builds an error whose `error` and `code` are both code, as decisions.md asks for
// machine-readable conditions.
func New(status int, code string) *Error {
	return &Error{Status: status, Body: Body{Error: code, Code: code}}
}

// Plain builds an error with only `error` set: the contract gives some conditions a word
// rather than a code ("not found", "invalid slug", "unauthorized").
func Plain(status int, word string) *Error {
	return &Error{Status: status, Body: Body{Error: word}}
}

// WithMessage returns a copy with a human-readable message.
func (e *Error) WithMessage(format string, args ...any) *Error {
	c := *e
	c.Body.Message = fmt.Sprintf(format, args...)
	return &c
}

// WithLimit returns a copy carrying the limit that was hit and the plan that sets it.
func (e *Error) WithLimit(limit int64, plan string) *Error {
	c := *e
	c.Body.Limit = &limit
	c.Body.Plan = plan
	return &c
}

// WithField returns a copy naming the request member that was wrong.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Body.Field = field
	return &c
}

// WithRetryAfter returns a copy carrying retryAfter and retryAfterSeconds (whole seconds, at
// least 1), which every 429 sets.
func (e *Error) WithRetryAfter(seconds int) *Error {
	if seconds < 1 {
		seconds = 1
	}
	c := *e
	c.Body.RetryAfter = &seconds
	c.Body.RetryAfterSeconds = &seconds
	return &c
}

// Common errors of the contract.
var (
	NotFound     = Plain(http.StatusNotFound, "not found")
	Unauthorized = Plain(http.StatusUnauthorized, "unauthorized")
	Internal     = Plain(http.StatusInternalServerError, "internal")
)

// From finds the *Error in err's chain; ok is false when there is none.
func From(err error) (*Error, bool) {
	var he *Error
	if errors.As(err, &he) {
		return he, true
	}
	return nil, false
}

// ForStatus gives a generic error for a bare status code, for failures that come from the
// framework (an unknown route, a body over the size limit) rather than from a handler.
func ForStatus(status int) *Error {
	switch status {
	case http.StatusNotFound:
		return NotFound
	case http.StatusUnauthorized:
		return Unauthorized
	case http.StatusMethodNotAllowed:
		return New(status, "method_not_allowed")
	case http.StatusRequestEntityTooLarge:
		return New(status, "payload_too_large")
	case http.StatusUnsupportedMediaType:
		return New(status, "unsupported_media_type")
	case http.StatusBadRequest:
		return New(status, "bad_request")
	}
	if status >= 500 {
		return &Error{Status: status, Body: Body{Error: "internal"}}
	}
	word := strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	if word == "" {
		word = "error"
	}
	return New(status, word)
}
