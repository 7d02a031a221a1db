package revision

import (
	"errors"
	"fmt"
)

var (
	// ErrTransition is a move the state machine does not list.
	ErrTransition = errors.New("revision: transition not allowed")
	// ErrTerminal is a move out of a final state; it wraps ErrTransition too.
	ErrTerminal = fmt.Errorf("%w: the revision's state is final", ErrTransition)
	// ErrNotFound means no such revision.
	ErrNotFound = errors.New("revision: not found")
	// ErrDiscarded ends a preparation the control plane gave up.
	ErrDiscarded = errors.New("revision: discarded")
)

// Failure codes a zone reports; the runner adds those of service revisions.
const (
	CodeInvalidArtifact = "invalid_artifact"
	CodeNoRuntime       = "image_runtime_unavailable"
	CodeZoneError       = "zone_error"
)

// FailError is a preparation failure with the code the control plane records.
type FailError struct {
	Code    string
	Message string
}

func (e *FailError) Error() string { return e.Code + ": " + e.Message }
