package supervisor

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"tori.dev/contract/limits"
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// releaseJobName is the release Job's name; a retry of the same deploy finds its record by it.
func releaseJobName(deployID string) string { return "release-" + deployID }

// job is the work of a build or release Job. It must stop when ctx ends, which is how a
// time limit kills it; it returns the exit status.
type job func(ctx context.Context) (int, error)

// release runs the release Job named release-<deployId> within the contract's 10 minutes.
// A retry of the same deploy reuses the record: a Job that already succeeded does not run
// again. A job may fail with an *revision.FailError of its own (an image that cannot be
// pulled); it is reported as it is.
func (l *Local) release(ctx context.Context, rev revision.Revision, jobs app.JobRecorder, work job) error {
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
	if err := jobs.Step(ctx, app.StepReleaseStarted, name); err != nil {
		return err
	}
	code, runErr := l.withinLimit(ctx, limits.ReleaseLimit, work)
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
	return jobs.Step(ctx, app.StepReleaseSucceeded, name)
}

var errTimedOut = errors.New("timed out")

// withinLimit runs work until it ends or limit (by the runner's clock) passes; then it
// cancels work, waits for it to stop and returns errTimedOut.
func (l *Local) withinLimit(ctx context.Context, limit time.Duration, work job) (int, error) {
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
	case <-l.Clock.After(limit):
		cancel()
		<-done
		return -1, errTimedOut
	}
}

// runCommand runs a command of the revision's tree in the sandbox to completion, its output
// going to stream. Cancelling ctx kills its process group.
func (l *Local) runCommand(ctx context.Context, rev revision.Revision, dir string, argv []string, vars map[string]string, r *Redactor, stream string) (int, error) {
	ctx, span := startSpan(ctx, "zone "+stream, rev) // trace.go
	defer span.End()
	out := l.newLineWriter(r, rev.AppID, rev.DeployID, stream)
	spec := sandbox.Spec{AppID: rev.AppID, Dir: dir, Argv: argv, Env: sandbox.Environ(vars, 0), CPU: rev.CPU, Stdout: out, Stderr: out}
	sb, err := l.Sandbox.Start(ctx, l.withBuildCache(spec, stream, vars)) // buildcache.go
	if err != nil {
		return -1, err
	}
	err = l.watchMemory(sb, rev.AppID, rev.DeployID)
	out.Flush()
	return exitStatus(err), err
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
