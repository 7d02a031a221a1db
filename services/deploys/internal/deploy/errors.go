package deploy

import (
	"errors"
	"fmt"
)

// Sentinel errors of the domain. The HTTP layer maps them to statuses in one place.
var (
	ErrInvalidTransition = errors.New("deploy: transition not allowed")
	ErrTerminal          = errors.New("deploy: deploy is in a final state")
	ErrNewerLive         = errors.New("deploy: a newer deploy is live")
	ErrNotCancellable    = errors.New("deploy: not cancellable")
	ErrNotRollbackable   = errors.New("deploy: not rollbackable")

	ErrInvalidImage        = errors.New("deploy: invalid image reference")
	ErrInvalidPath         = errors.New("deploy: invalid file path")
	ErrInvalidRelease      = errors.New("deploy: invalid release command")
	ErrForceWithoutImage   = errors.New("deploy: forceRestart needs an image")
	ErrKindMismatch        = errors.New("deploy: payload does not fit the app's kind")
	ErrInvalidBody         = errors.New("deploy: malformed request body")
	ErrNoFiles             = errors.New("deploy: the upload holds no files")
	ErrAppNotFound         = errors.New("deploy: app not found")
	ErrNotFound            = errors.New("deploy: deploy not found")
	ErrInvalidParameter    = errors.New("deploy: invalid query parameter")
	ErrSnapshotUnavailable = errors.New("deploy: environment snapshot unavailable")
	// ErrPlanUnavailable means neither a copy of the account's plan nor billing's answer
	// was at hand: the limits are unknown, and nothing guesses them.
	ErrPlanUnavailable = errors.New("deploy: account plan unavailable")
	// ErrAppUnavailable means the app is not in this service's copy and the apps service
	// could not say whether it exists: a 404 then might be false, so none is given.
	ErrAppUnavailable = errors.New("deploy: app lookup unavailable")
	// ErrNotHosted refuses a zone something about a deploy it does not host now.
	ErrNotHosted = errors.New("deploy: the zone does not host that deploy")
	// ErrNoArtifact: the deploy has no uploaded artifact (an image deploy).
	ErrNoArtifact = errors.New("deploy: the deploy has no artifact")
)

// LimitError is a plan limit that refused the request.
type LimitError struct {
	Err        error // ErrUploadTooLarge or ErrDeployLimit
	Limit      int64
	Plan       string
	RetryAfter int // seconds, for ErrDeployLimit
}

// Limit sentinels wrapped by LimitError.
var (
	ErrUploadTooLarge = errors.New("deploy: upload over the plan's size")
	ErrDeployLimit    = errors.New("deploy: too many deploys under way")
)

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (limit %d on %s)", e.Err, e.Limit, e.Plan)
}

func (e *LimitError) Unwrap() error { return e.Err }

// ParamError names the query parameter that was wrong.
type ParamError struct{ Name, Reason string }

func (e *ParamError) Error() string { return e.Name + ": " + e.Reason }

func (e *ParamError) Unwrap() error { return ErrInvalidParameter }
