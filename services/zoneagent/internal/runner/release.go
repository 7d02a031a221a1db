package runner

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/zoneagent/internal/agent"
	"tori.dev/services/zoneagent/internal/store"
)

// release runs the release Job named release-<deployId>. A retry of the same deploy reuses
// the record: a Job that already succeeded does not run again.
func (l *Local) release(ctx context.Context, rev store.Revision, dir string, argv []string, vars map[string]string, r *Redactor, jobs agent.JobRecorder) error {
	name := "release-" + rev.DeployID
	state, err := jobs.JobState(ctx, name)
	if err != nil {
		return err
	}
	if state == "succeeded" {
		return nil
	}
	if err := jobs.SetJobState(ctx, name, rev.DeployID, "running"); err != nil {
		return err
	}
	if err := jobs.Step(ctx, agent.StepReleaseStarted, name); err != nil {
		return err
	}
	code, runErr := l.runJob(ctx, rev, dir, argv, vars, r, "release", ReleaseLimit)
	state = "succeeded"
	if runErr != nil {
		state = "failed"
	}
	if ctx.Err() != nil {
		return ctx.Err() // the agent stops: the Job is rerun under the same name after restart
	}
	if err := jobs.SetJobState(ctx, name, rev.DeployID, state); err != nil {
		return err
	}
	if runErr != nil {
		return failed(code, CodeReleaseFailed, CodeReleaseTimeout, "release "+name, runErr)
	}
	return jobs.Step(ctx, agent.StepReleaseSucceeded, name)
}

var errTimedOut = errors.New("timed out")

// runJob runs a command to completion within limit, its output going to stream. It returns
// the exit status and errTimedOut when the limit (by the runner's clock) passed first.
func (l *Local) runJob(ctx context.Context, rev store.Revision, dir string, argv []string, vars map[string]string, r *Redactor, stream string, limit time.Duration) (int, error) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := l.Sandbox.Command(jctx, rev.AppID, dir, argv, Environ(vars, dir, 0))
	out := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, stream)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	l.limitCPU(rev, cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := l.Clock.After(limit)
	var err error
	select {
	case err = <-done:
	case <-timer:
		cancel()
		<-done
		err = errTimedOut
	}
	out.Flush()
	if err == nil {
		return 0, nil
	}
	if errors.Is(err, errTimedOut) {
		return -1, err
	}
	return cmd.ProcessState.ExitCode(), err
}
