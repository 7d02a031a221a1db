package supervisor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"

	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/usecase"
)

// Why a cron run's context ended, which decides what is reported.
var (
	errCronCancelled    = errors.New("the run was cancelled")
	errCronTimedOut     = errors.New("the run exceeded its timeout")
	errCronAppStopped   = errors.New("the app was stopped")
	errCronZoneStopping = errors.New("the zone is stopping") // reported by the zone's next start
	// errCronNotStarted: the run was no longer accepted, or its context ended, as it was
	// about to start; no command ran.
	errCronNotStarted = errors.New("the run did not start")
)

// cronRefused is a run that could not reach its command, with why for the customer.
type cronRefused struct{ message string }

func (e *cronRefused) Error() string { return e.message }

// cronRuns are the runs a Local holds, by run id.
type cronRuns struct {
	mu   sync.Mutex
	runs map[string]*cronHandle
}

type cronHandle struct {
	appID string
	stop  context.CancelCauseFunc
	done  chan struct{} // closed once the run's process is gone
}

func (c *cronRuns) add(run revision.CronRun, stop context.CancelCauseFunc) *cronHandle {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]*cronHandle{}
	}
	h := &cronHandle{appID: run.AppID, stop: stop, done: make(chan struct{})}
	c.runs[run.RunID] = h
	return h
}

func (c *cronRuns) remove(runID string, h *cronHandle) {
	c.mu.Lock()
	if c.runs[runID] == h {
		delete(c.runs, runID)
	}
	c.mu.Unlock()
	close(h.done)
}

// stop ends the runs that match, for cause, and waits until their processes are gone.
func (c *cronRuns) stop(match func(runID string, h *cronHandle) bool, cause error) {
	c.mu.Lock()
	var stopped []*cronHandle
	for id, h := range c.runs {
		if match(id, h) {
			h.stop(cause)
			stopped = append(stopped, h)
		}
	}
	c.mu.Unlock()
	for _, h := range stopped {
		<-h.done
	}
}

var _ usecase.CronRunner = (*Local)(nil)

// StartCron runs a cron run in a fresh sandbox of its own (a container for an image app),
// from the deploy's tree with its environment snapshot, whether or not the app's web is
// napping; several runs of one job may run at once. It returns at once.
func (l *Local) StartCron(run revision.CronRun, report usecase.CronReporter) {
	ctx, stop := context.WithCancelCause(context.Background())
	h := l.crons.add(run, stop)
	go func() {
		end, ok := l.runCron(ctx, run, report)
		stop(nil)
		l.crons.remove(run.RunID, h)
		if ok {
			report.Ended(context.Background(), run, end)
		}
	}()
}

// CancelCron kills a run; it reports CANCELLED as it ends.
func (l *Local) CancelCron(runID string) {
	l.crons.stop(func(id string, _ *cronHandle) bool { return id == runID }, errCronCancelled)
}

// stopCronRuns kills the app's runs (they end CANCELLED), or every run when appID is ""
// (the zone stopping: its next start reports them).
func (l *Local) stopCronRuns(appID string) {
	cause := errCronAppStopped
	if appID == "" {
		cause = errCronZoneStopping
	}
	l.crons.stop(func(_ string, h *cronHandle) bool { return appID == "" || h.appID == appID }, cause)
}

// runCron runs run to its end and says how it ended; false when there is nothing to report
// (it never started, or the zone is stopping).
func (l *Local) runCron(ctx context.Context, run revision.CronRun, report usecase.CronReporter) (revision.CronEnd, bool) {
	ctx, cancel := context.WithTimeoutCause(ctx, run.Timeout, errCronTimedOut)
	defer cancel()
	// Started's record is written whatever happens to ctx meanwhile: a run half-recorded
	// as started would never be reported.
	started := func() bool { return ctx.Err() == nil && report.Started(context.WithoutCancel(ctx), run) }
	code, err := l.cronCommand(ctx, run, started)
	if errors.Is(err, errCronNotStarted) && ctx.Err() == nil {
		return revision.CronEnd{}, false // no longer accepted: cancelled before it began
	}
	return cronEnd(ctx, run, code, err)
}

// cronCommand loads the run's revision and runs its command in the runtime of its kind.
func (l *Local) cronCommand(ctx context.Context, run revision.CronRun, started func() bool) (int, error) {
	if l.Revision == nil {
		return -1, &cronRefused{"this zone cannot read its deploys"}
	}
	rev, err := l.Revision(ctx, run.DeployID)
	if err != nil {
		return -1, &cronRefused{"the run's deploy could not be read on this zone"}
	}
	if err := l.Identities.Ensure(ctx, rev.AppID); err != nil {
		return -1, &cronRefused{"the app's files could not be made ready on this zone"}
	}
	if rev.Kind.Image() {
		return l.Image.cron(ctx, rev, run, started)
	}
	return l.Source.cron(ctx, rev, run, started)
}

// cronEnd maps how a run's command ended to its report; false for nothing to report.
func cronEnd(ctx context.Context, run revision.CronRun, code int, err error) (revision.CronEnd, bool) {
	var refused *cronRefused
	switch cause := context.Cause(ctx); {
	case err == nil:
		return revision.CronEnd{Status: revision.CronSucceeded}, true
	case ctx.Err() != nil && errors.Is(cause, errCronZoneStopping):
		return revision.CronEnd{}, false
	case ctx.Err() != nil && errors.Is(cause, errCronTimedOut):
		return revision.CronEnd{Status: revision.CronTimedOut, ExitCode: -1, Message: fmt.Sprintf("killed after its timeout of %s", run.Timeout)}, true
	case ctx.Err() != nil && errors.Is(cause, errCronAppStopped):
		return revision.CronEnd{Status: revision.CronCancelled, ExitCode: -1, Message: "the app was stopped"}, true
	case ctx.Err() != nil:
		return revision.CronEnd{Status: revision.CronCancelled, ExitCode: -1}, true
	case errors.As(err, &refused):
		return revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: refused.message}, true
	case code > 0:
		return revision.CronEnd{Status: revision.CronFailed, ExitCode: code}, true
	}
	return revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: "the command did not exit by itself: " + err.Error()}, true
}

// cronEnv is the deploy's environment with the run's process name, and no PORT.
func cronEnv(vars map[string]string, run revision.CronRun) map[string]string {
	out := maps.Clone(vars)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, "PORT")
	out["TORI_PROCESS"] = run.Process()
	return out
}

// cron runs a cron run's command through the shell in a fresh sandbox in the revision's
// built tree (where its web runs), in a cgroup of its own with the plan's instance memory.
// Cancelling ctx kills its process group.
func (s *SourceRuntime) cron(ctx context.Context, rev revision.Revision, run revision.CronRun, started func() bool) (int, error) {
	if s.Sandbox.Unavailable != "" {
		return -1, &cronRefused{"this zone cannot confine customer code: " + s.Sandbox.Unavailable}
	}
	if err := s.Identities.Disk(rev.AppID); err != nil {
		return -1, &cronRefused{"the app's disk could not be mounted on this zone"}
	}
	dir := s.Identities.Tree(rev.AppID, rev.DeployID)
	if _, err := os.Stat(dir); err != nil {
		return -1, &cronRefused{"the deploy's files are no longer on this zone"}
	}
	// Planned again from the tree as a wake does: the environment the plan adds (a PATH).
	plan, _, _, err := s.planBuild(dir)
	if err != nil {
		return -1, &cronRefused{"the deploy's build plan could not be read again"}
	}
	vars, err := openEnv(ctx, s.Env, rev)
	if err != nil {
		return -1, &cronRefused{"the environment snapshot could not be opened"}
	}
	redactor := NewRedactor(vars)
	if !started() {
		return -1, errCronNotStarted
	}
	process := run.Process()
	// Through the shell as written, not exec'd as a start line is: a one-off command may be
	// a builtin (exit, cd, export), and the kill takes the whole process group anyway.
	stdout := s.Output.instanceWriter(redactor, rev.AppID, rev.DeployID, process, "stdout")
	stderr := s.Output.instanceWriter(redactor, rev.AppID, rev.DeployID, process, "stderr")
	sb, err := s.Sandbox.Start(ctx, sandbox.Spec{AppID: rev.AppID, Dir: dir, Argv: ShellCommand(run.Command),
		Env: sandbox.Environ(cronEnv(withPlanEnv(vars, plan), run), 0), CPU: rev.CPU, Stdout: stdout, Stderr: stderr,
		Instance: process, MemoryBytes: rev.InstanceMemoryBytes})
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, &cronRefused{"the run's sandbox could not start: " + err.Error()}
	}
	err = s.watchMemory(sb, rev.AppID, rev.DeployID, process)
	stdout.Flush()
	stderr.Flush()
	return exitStatus(err), err
}

// cronImageUnavailable is the failure of an image app's run on a zone without a container
// runtime.
const cronImageUnavailable = "cron jobs of image apps need the container runtime"

// cron runs a cron run's command through the image's shell in a container of its own, named
// after the run, removed when it ends; killing the CLI does not stop a container, so one
// cancelled or timed out is removed by name.
func (i *ImageRuntime) cron(ctx context.Context, rev revision.Revision, run revision.CronRun, started func() bool) (int, error) {
	if i == nil || i.Containers == nil {
		return -1, &cronRefused{cronImageUnavailable}
	}
	vars, err := openEnv(ctx, i.Env, rev)
	if err != nil {
		return -1, &cronRefused{"the environment snapshot could not be opened"}
	}
	if err := imageruntime.CheckEnvFile(vars); err != nil {
		return -1, &cronRefused{err.Error()}
	}
	redactor := NewRedactor(vars)
	if !started() {
		return -1, errCronNotStarted
	}
	name := "tori-cron-" + run.RunID
	ct, err := i.container(ctx, rev, name, cronEnv(vars, run), 0, ShellCommand(run.Command))
	if err != nil {
		return -1, &cronRefused{"the run's container could not be made: " + err.Error()}
	}
	if rev.InstanceMemoryBytes > 0 {
		ct.MemoryBytes = rev.InstanceMemoryBytes
	}
	out := instanceLineWriter(i.Logs, redactor, rev.AppID, rev.DeployID, run.Process(), "stdout")
	err = i.Containers.Run(ctx, ct, out)
	out.Flush()
	if ctx.Err() != nil {
		i.removeContainer(name)
	}
	return exitStatus(err), err
}
