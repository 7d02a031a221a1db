// Package supervisor runs service revisions on this machine: source tarballs are unpacked,
// built and started as local processes in a sandbox; images run through a container
// runtime's CLI (docker or podman) when the zone has one.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
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

// Clock is the time the build and release limits are measured by; tests inject one to
// cross the 10-minute release limit without waiting.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Local runs service revisions: source ones as local processes, image ones in containers.
type Local struct {
	AppsDir string // each app's trees: <AppsDir>/<app>/<deploy>
	// Artifacts fetches a revision's artifact (artifact.Fetcher: by a presigned URL).
	Artifacts artifact.Source
	// Containers runs image revisions; nil where the zone has no container runtime, and
	// image deploys then fail with image_runtime_unavailable.
	Containers imageruntime.ContainerRuntime
	Sandbox    sandbox.Sandbox
	// UIDs is the zone's allocation table of app uids (a unique one per app); the range is
	// UIDBase+1 .. UIDBase+UIDCount-1 (UIDBase is the sandbox probe's).
	UIDs     UIDTable
	UIDBase  uint32
	UIDCount uint32
	// Disks gives each app its own filesystem (the disk quota); nil keeps trees on AppsDir's.
	Disks *sandbox.Disks
	// LogLinesPerSecond bounds each app's output; 0 leaves it unbounded.
	LogLinesPerSecond int
	Env               EnvOpener
	Logs              LogSink
	Clock             Clock
	// HealthTimeout bounds how long a new process may take to answer its health check.
	HealthTimeout time.Duration
	// IdleAfter: a minScale-0 service with no request for this long is stopped (napping).
	IdleAfter time.Duration
	// Napped is told when an app naps or wakes.
	Napped func(ctx context.Context, appID string, napping bool)
	// Revision loads a revision's record, to restart it after a nap or an agent restart.
	Revision func(ctx context.Context, deployID string) (revision.Revision, error)
	Log      *slog.Logger
	// AppsDomain is APPS_DOMAIN: a Set-Cookie an app sends for it (or a parent) is dropped.
	AppsDomain string

	mu       sync.Mutex
	active   map[string]*proc // by app: the process the edge proxies to
	prepared map[string]*proc // by deploy: healthy, waiting for activation
	waking   map[string]chan struct{}
	bounds   map[string]*lineBound
}

// UIDTable allocates each app a uid of its own in [lo, hi], the same on every call, until
// it is freed when the app is deleted. A freed uid waits in quarantine (with its last
// owner's app id) until released: no app gets it meanwhile (see SweepUIDs).
type UIDTable interface {
	AllocateUID(ctx context.Context, appID string, lo, hi uint32) (uint32, error)
	FreeUID(ctx context.Context, appID string) error
	QuarantinedUIDs(ctx context.Context) (map[uint32]string, error)
	ReleaseUID(ctx context.Context, uid uint32) error
}

var _ app.Runner = (*Local)(nil)

func (l *Local) init() {
	if l.active == nil {
		l.active, l.prepared, l.waking = map[string]*proc{}, map[string]*proc{}, map[string]chan struct{}{}
		l.bounds = map[string]*lineBound{}
	}
	if l.Clock == nil {
		l.Clock = realClock{}
	}
	if l.HealthTimeout == 0 {
		l.HealthTimeout = time.Minute
	}
	if l.Log == nil {
		l.Log = slog.Default()
	}
}

// tree is where a revision's source lives; its process runs there and sees nothing else.
func (l *Local) tree(appID, deployID string) string { return filepath.Join(l.AppsDir, appID, deployID) }

// Prepare unpacks, builds and releases a revision and starts its process, healthy.
func (l *Local) Prepare(ctx context.Context, rev revision.Revision, jobs app.JobRecorder) error {
	l.mu.Lock()
	l.init()
	l.mu.Unlock()
	if err := l.identity(ctx, rev.AppID); err != nil {
		return err
	}
	if rev.Kind.Image() {
		return l.prepareImage(ctx, rev, jobs)
	}
	if l.Sandbox.Unavailable != "" {
		return &revision.FailError{Code: sandbox.CodeSandboxUnavailable, Message: "this zone cannot confine customer code: " + l.Sandbox.Unavailable}
	}
	dir := l.tree(rev.AppID, rev.DeployID)
	if err := l.appDisk(rev.AppID); err != nil {
		return err
	}
	if err := l.unpack(ctx, rev, dir); err != nil {
		return err
	}
	if err := l.prepareBuildCache(rev); err != nil { // buildcache.go
		return err
	}
	plan, m, manifestRelease, err := l.planBuild(dir)
	if err != nil {
		return err
	}
	if err := jobs.BuildDetected(ctx, plan); err != nil {
		return err
	}
	m.Start = plan.Start
	vars, err := l.openEnv(ctx, rev)
	if err != nil {
		return err
	}
	redactor := NewRedactor(vars) // the deploy's values only: the plan's are no secret
	vars = withPlanEnv(vars, plan)
	if plan.Build != "" {
		limit := time.Duration(rev.BuildMinutes) * time.Minute
		if limit <= 0 {
			limit = 10 * time.Minute
		}
		code, err := l.withinLimit(ctx, limit, func(jctx context.Context) (int, error) {
			return l.runCommand(jctx, rev, dir, ShellCommand(plan.Build), vars, redactor, "build")
		})
		if err != nil {
			return failed(code, CodeBuildFailed, CodeBuildTimeout, "build", err)
		}
	}
	if jobs.Discarded(ctx) {
		return revision.ErrDiscarded // given up during the build: no release Job starts
	}
	release := manifestRelease
	if rev.ReleaseGiven || len(rev.Release) > 0 {
		release = rev.Release
	}
	if len(release) > 0 {
		run := func(jctx context.Context) (int, error) {
			return l.runCommand(jctx, rev, dir, release, vars, redactor, "release")
		}
		if err := l.release(ctx, rev, jobs, run); err != nil {
			return err
		}
	}
	if jobs.Discarded(ctx) {
		return revision.ErrDiscarded // cancelled while building or releasing: never started
	}
	p, err := l.start(ctx, rev, dir, m, vars, redactor)
	if err != nil {
		return err
	}
	l.keepPrepared(p)
	return nil
}

// keepPrepared holds a healthy process until the control plane activates or discards it;
// one left by an earlier attempt of the same deploy stops.
func (l *Local) keepPrepared(p *proc) {
	l.mu.Lock()
	old := l.prepared[p.deployID]
	l.prepared[p.deployID] = p
	l.mu.Unlock()
	if old != nil && old != p {
		old.stop()
	}
}

func failed(code int, failCode, timeoutCode, what string, err error) error {
	if errors.Is(err, errTimedOut) {
		return &revision.FailError{Code: timeoutCode, Message: what + " exceeded its time limit"}
	}
	return &revision.FailError{Code: failCode, Message: fmt.Sprintf("%s exited with status %d", what, code)}
}

func (l *Local) unpack(ctx context.Context, rev revision.Revision, dir string) error {
	if err := os.RemoveAll(dir); err != nil { // a half-done earlier attempt
		return err
	}
	f, err := l.Artifacts.Open(ctx, rev.AppID, rev.DeployID)
	if err != nil {
		return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: fmt.Sprintf("artifact unavailable: %v", err)}
	}
	defer f.Close()
	lim := artifact.DefaultLimits
	lim.AllowSymlinks = true
	if _, err := artifact.Unpack(f, true, dir, lim); err != nil {
		if errors.Is(err, artifact.ErrUnsafe) {
			return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: err.Error()}
		}
		return err
	}
	return l.own(rev.AppID, dir)
}

// own hands the tree to the app's uid: its processes may write there and nowhere else.
func (l *Local) own(appID, dir string) error {
	cred := l.Sandbox.Credential(appID)
	if cred == nil {
		return fmt.Errorf("app %s has no uid", appID)
	}
	// The app folder is private to the app's uid; AppsDir itself is traverse-only (0711).
	if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Lchown(filepath.Dir(dir), int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// identity looks up (allocating the first time) the app's uid and gives it to the sandbox.
func (l *Local) identity(ctx context.Context, appID string) error {
	if l.Sandbox.Credential(appID) != nil {
		return nil
	}
	if l.UIDs == nil {
		return fmt.Errorf("no uid table")
	}
	// Uids whose last owner has left nothing behind become free first.
	if _, err := l.SweepUIDs(ctx); err != nil {
		slog.WarnContext(ctx, "uid quarantine not swept", "err", err.Error())
	}
	uid, err := l.UIDs.AllocateUID(ctx, appID, l.UIDBase+1, l.UIDBase+l.UIDCount-1)
	if err != nil {
		return fmt.Errorf("allocate the app's uid: %w", err)
	}
	l.Sandbox.SetUID(appID, uid)
	return nil
}

// appDisk mounts the app's own filesystem on its folder (see Disks).
func (l *Local) appDisk(appID string) error {
	if l.Disks == nil {
		return nil
	}
	return l.Disks.Ensure(appID, filepath.Join(l.AppsDir, appID), l.Sandbox.Credential(appID).Uid)
}

func (l *Local) openEnv(ctx context.Context, rev revision.Revision) (map[string]string, error) {
	if len(rev.EnvSealed) == 0 || l.Env == nil {
		return map[string]string{}, nil
	}
	vars, err := l.Env.Open(ctx, rev)
	if err != nil {
		return nil, &revision.FailError{Code: CodeEnvUnavailable, Message: "the environment snapshot could not be opened"}
	}
	return vars, nil
}

// Discard stops a prepared revision and removes its tree.
func (l *Local) Discard(_ context.Context, appID, deployID string) error {
	l.mu.Lock()
	l.init()
	p := l.prepared[deployID]
	delete(l.prepared, deployID)
	l.mu.Unlock()
	if p != nil {
		p.stop()
	}
	return os.RemoveAll(l.tree(appID, deployID))
}

// StopApp stops every process of a deleted app, removes its trees and frees its uid.
func (l *Local) StopApp(ctx context.Context, appID string) error {
	l.mu.Lock()
	l.init()
	var stop []*proc
	if p := l.active[appID]; p != nil {
		stop = append(stop, p)
		delete(l.active, appID)
	}
	for id, p := range l.prepared {
		if p.appID == appID {
			stop = append(stop, p)
			delete(l.prepared, id)
		}
	}
	l.mu.Unlock()
	for _, p := range stop {
		p.stop()
	}
	l.removeAppNetwork(ctx, appID)
	l.Sandbox.ReleaseNetwork(appID)
	if l.Sandbox.Cgroups != nil {
		l.Sandbox.Cgroups.Remove(appID) // anything left, then the group
	}
	dir := filepath.Join(l.AppsDir, appID)
	if l.Disks != nil {
		if err := l.Disks.Release(appID, dir); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.bounds, appID)
	l.mu.Unlock()
	if l.UIDs == nil {
		return nil
	}
	l.Sandbox.ForgetUID(appID)
	return l.UIDs.FreeUID(ctx, appID)
}

// StopAll stops every process; the agent calls it when it stops, so none is orphaned.
func (l *Local) StopAll() {
	l.mu.Lock()
	l.init()
	var all []*proc
	for _, p := range l.active {
		all = append(all, p)
	}
	for _, p := range l.prepared {
		all = append(all, p)
	}
	l.active, l.prepared = map[string]*proc{}, map[string]*proc{}
	l.mu.Unlock()
	for _, p := range all {
		p.stop()
	}
	// pasta runs on its own: it would outlive the agent with the namespaces it holds.
	l.Sandbox.ReleaseNetworks()
	l.Log.Info("stopped service processes", "count", len(all))
}

var _ io.Closer = (*proc)(nil)
