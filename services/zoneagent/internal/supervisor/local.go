// Package supervisor runs service revisions on this machine: source tarballs are unpacked,
// built and started as local processes in a sandbox (SourceRuntime); images run through a
// container runtime's CLI (docker or podman) when the zone has one (ImageRuntime). Local
// picks the runtime by the revision's kind and keeps the table of running processes.
package supervisor

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

// Failure codes of service revisions.
const (
	CodeBuildFailed    = "build_failed"
	CodeBuildTimeout   = "build_timeout"
	CodeReleaseFailed  = "release_failed"
	CodeReleaseTimeout = "release_timeout"
	CodeHealthFailed   = "health_check_failed"
	CodeInvalidSource  = "invalid_source"
	CodeEnvUnavailable = "environment_unavailable"
)

// EnvOpener opens a sealed environment snapshot (apps.rpc.env_open).
type EnvOpener interface {
	Open(ctx context.Context, rev revision.Revision) (map[string]string, error)
}

// openEnv opens the revision's sealed environment; a revision without one has none.
func openEnv(ctx context.Context, env EnvOpener, rev revision.Revision) (map[string]string, error) {
	if len(rev.EnvSealed) == 0 || env == nil {
		return previewEnv(rev, map[string]string{}), nil // previews.go
	}
	vars, err := env.Open(ctx, rev)
	if err != nil {
		return nil, &revision.FailError{Code: CodeEnvUnavailable, Message: "the environment snapshot could not be opened"}
	}
	return previewEnv(rev, vars), nil
}

// Clock is the time the build and release limits are measured by; tests inject one to
// cross the 10-minute release limit without waiting.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// clockOr is c, or the real clock when none is given.
func clockOr(c Clock) Clock {
	if c == nil {
		return realClock{}
	}
	return c
}

// logOr is log, or the default logger when none is given.
func logOr(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}

// Local runs service revisions: it hands each to the runtime of its kind and keeps the
// processes they start (prepared, active, waking), napping idle ones and waking them on
// their next request.
type Local struct {
	Source *SourceRuntime // source revisions: sandboxed processes
	Image  *ImageRuntime  // image revisions: containers
	// Identities gives each app its uid and its filesystem, for either kind.
	Identities *Identities
	// Revision loads a revision's record, to restart it after a nap or an agent restart.
	Revision func(ctx context.Context, deployID string) (revision.Revision, error)
	// IdleAfter: a minScale-0 service with no request for this long is stopped (napping).
	IdleAfter time.Duration
	// Formation loads the formation on record for a revision, to bring its instances back
	// after an agent restart; nil: one web.
	Formation func(ctx context.Context, deployID string) (revision.Formation, error)
	// Napped is told when an app naps or wakes.
	Napped func(ctx context.Context, appID string, napping bool)
	// FormationChanged is told how many instances of each declared type of an app's live
	// revision run, whenever that changes.
	FormationChanged func(ctx context.Context, appID, deployID string, running []revision.ProcessRunning)
	Log              *slog.Logger

	procs    processTable
	previews previewTable // previews.go
	crons    cronRuns     // cronrun.go
	reportMu sync.Mutex
	reported map[string]string // by app: the last report's counts
}

var _ usecase.Runner = (*Local)(nil)

func (l *Local) logger() *slog.Logger { return logOr(l.Log) }

// runtime is what the runtime of each kind does for Local: prepare a new revision, and read
// a prepared one back from what preparing left (after a nap or an agent restart); either
// gives what starts its instances.
type runtime interface {
	prepare(ctx context.Context, rev revision.Revision, jobs usecase.JobRecorder) (launcher, error)
	launcher(ctx context.Context, rev revision.Revision) (launcher, error)
}

// runtimeFor is the runtime of a revision kind: images', or sources' for every other.
func (l *Local) runtimeFor(kind revision.Kind) runtime {
	if kind.Image() {
		return l.Image
	}
	return l.Source
}

// Prepare builds (or pulls) and releases a revision and, when it declares web, starts one
// web instance, healthy; it is kept until Activate or Discard. A revision without web is
// prepared once built and released: nothing of it runs before activation.
func (l *Local) Prepare(ctx context.Context, rev revision.Revision, jobs usecase.JobRecorder) error {
	if err := l.Identities.Ensure(ctx, rev.AppID); err != nil {
		return err
	}
	ln, err := l.runtimeFor(rev.Kind).prepare(ctx, rev, jobs)
	if err != nil {
		return err
	}
	prep := &preparedRev{appID: rev.AppID, launch: ln}
	if web, ok := processOf(ln, revision.Web); ok {
		if prep.web, err = ln.start(ctx, web, 1); err != nil {
			return err
		}
	}
	if old := l.procs.keepPrepared(rev.DeployID, prep); old != nil && old.web != nil && old.web != prep.web {
		old.web.stop()
	}
	return nil
}

// Discard stops a prepared revision and removes its tree.
func (l *Local) Discard(_ context.Context, appID, deployID string) error {
	if p := l.procs.takePrepared(deployID); p != nil && p.web != nil {
		p.web.stop()
	}
	return l.Identities.RemoveTree(appID, deployID)
}

// StopApp stops every instance of a deleted app (its cron runs too), removes its trees and
// frees its uid.
func (l *Local) StopApp(ctx context.Context, appID string) error {
	l.stopCronRuns(appID)
	l.stopAppPreviews(appID) // previews.go
	a, prepared := l.procs.takeApp(appID)
	if a != nil {
		stopInstances(a)
	}
	stopPrepared(prepared)
	l.reportMu.Lock()
	delete(l.reported, appID)
	l.reportMu.Unlock()
	l.Image.forgetApp(ctx, appID)
	l.Source.forgetApp(appID)
	return l.Identities.Release(ctx, appID)
}

// StopAll stops every instance; the agent calls it when it stops, so none is orphaned.
func (l *Local) StopAll() {
	l.stopCronRuns("")
	l.stopAppPreviews("")
	apps, prepared := l.procs.takeAll()
	for _, a := range apps {
		stopInstances(a)
	}
	stopPrepared(prepared)
	// pasta runs on its own: it would outlive the agent with the namespaces it holds.
	l.Source.Sandbox.ReleaseNetworks()
	l.logger().Info("stopped service processes", "apps", len(apps), "prepared", len(prepared))
}

func stopPrepared(prepared []*preparedRev) {
	for _, p := range prepared {
		if p.web != nil {
			p.web.stop()
		}
	}
}

var _ io.Closer = (*proc)(nil)
