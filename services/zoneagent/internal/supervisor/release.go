package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"tori.dev/contract/limits"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

// releaseJobName is the release Job's name; a retry of the same deploy finds its record by it.
func releaseJobName(deployID string) string { return "release-" + deployID }

// job is the work of a build or release Job. It must stop when ctx ends, which is how a
// time limit kills it; it returns the exit status.
type job func(ctx context.Context) (int, error)

// runRelease runs the release Job named release-<deployId> within the contract's 10 minutes
// (measured by clock). A retry of the same deploy reuses the record: a Job that already
// succeeded does not run again. A job may fail with an *revision.FailError of its own (an
// image that cannot be pulled); it is reported as it is.
func runRelease(ctx context.Context, clock Clock, rev revision.Revision, jobs usecase.JobRecorder, work job) error {
	name := releaseJobName(rev.DeployID)
	state, err := jobs.JobState(ctx, name)
	if err != nil {
		return err
	}
	if state == revision.JobSucceeded {
		return nil
	}
	if err := jobs.SetJobState(ctx, name, rev.DeployID, revision.JobRunning); err != nil {
		return err
	}
	if err := jobs.Step(ctx, usecase.StepReleaseStarted, name); err != nil {
		return err
	}
	code, runErr := withinLimit(ctx, clock, limits.ReleaseLimit, work)
	state = revision.JobSucceeded
	if runErr != nil {
		state = revision.JobFailed
	}
	if ctx.Err() != nil {
		return ctx.Err() // the agent stops: the Job is rerun under the same name after restart
	}
	if err := jobs.SetJobState(ctx, name, rev.DeployID, state); err != nil {
		return err
	}
	var fe *revision.FailError
	if errors.As(runErr, &fe) {
		return fe
	}
	if runErr != nil {
		return failed(code, CodeReleaseFailed, CodeReleaseTimeout, "release "+name, runErr)
	}
	return jobs.Step(ctx, usecase.StepReleaseSucceeded, name)
}

var errTimedOut = errors.New("timed out")

// withinLimit runs work until it ends or limit (by clock; nil is the real one) passes; then it
// cancels work, waits for it to stop and returns errTimedOut.
func withinLimit(ctx context.Context, clock Clock, limit time.Duration, work job) (int, error) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := work(jctx)
		done <- result{code, err}
	}()
	select {
	case res := <-done:
		return res.code, res.err
	case <-clockOr(clock).After(limit):
		cancel()
		<-done
		return -1, errTimedOut
	}
}

// exitStatus is a command's exit status: 0 on success, -1 when it did not exit by itself.
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// failed is the failure of a build or release that ended badly: timeoutCode when it ran
// past its limit, else failCode with its exit status.
func failed(code int, failCode, timeoutCode, what string, err error) error {
	if errors.Is(err, errTimedOut) {
		return &revision.FailError{Code: timeoutCode, Message: what + " exceeded its time limit"}
	}
	return &revision.FailError{Code: failCode, Message: fmt.Sprintf("%s exited with status %d", what, code)}
}
