package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/usecase"
)

// SourceRuntime runs source revisions: it unpacks the tarball into the revision's tree,
// plans and runs the build (with the app's build cache), runs the release Job as a
// sandboxed command, and starts the service in the sandbox, healthy.
type SourceRuntime struct {
	// Identities gives the revision's tree its owner and its app's filesystem.
	Identities *Identities
	// Artifacts fetches a revision's artifact (artifact.Fetcher: by a presigned URL).
	Artifacts artifact.Source
	Sandbox   *sandbox.Sandbox
	Env       EnvOpener
	// Output carries builds', release Jobs' and processes' output, within each app's bound.
	Output *Output
	// Clock measures the build and release limits; nil is the real one.
	Clock  Clock
	Health Health
	Log    *slog.Logger
}

// prepare unpacks, builds and releases a revision and returns what starts its instances.
func (s *SourceRuntime) prepare(ctx context.Context, rev revision.Revision, jobs usecase.JobRecorder) (launcher, error) {
	if s.Sandbox.Unavailable != "" {
		return nil, &revision.FailError{Code: sandbox.CodeSandboxUnavailable, Message: "this zone cannot confine customer code: " + s.Sandbox.Unavailable}
	}
	dir := s.Identities.Tree(rev.AppID, rev.DeployID)
	if err := s.Identities.Disk(rev.AppID); err != nil {
		return nil, err
	}
	reused := s.reuseTree(ctx, rev, dir) // reuse.go: a promoted preview's built tree
	if !reused {
		if err := s.unpack(ctx, rev, dir); err != nil {
			return nil, err
		}
	}
	if err := s.prepareBuildCache(rev); err != nil { // buildcache.go
		return nil, err
	}
	plan, m, manifestRelease, err := s.planBuild(dir)
	if err != nil {
		return nil, err
	}
	if err := jobs.BuildDetected(ctx, plan); err != nil {
		return nil, err
	}
	m.Start = plan.Start
	vars, err := openEnv(ctx, s.Env, rev)
	if err != nil {
		return nil, err
	}
	redactor := NewRedactor(vars) // the deploy's values only: the plan's are no secret
	vars = withPlanEnv(vars, plan)
	if plan.Build != "" && !reused {
		limit := time.Duration(rev.BuildMinutes) * time.Minute
		if limit <= 0 {
			limit = 10 * time.Minute
		}
		code, err := withinLimit(ctx, s.Clock, limit, func(jctx context.Context) (int, error) {
			return s.runCommand(jctx, rev, dir, ShellCommand(plan.Build), vars, redactor, "build")
		})
		if err != nil {
			return nil, failed(code, CodeBuildFailed, CodeBuildTimeout, "build", err)
		}
	}
	if jobs.Discarded(ctx) {
		return nil, revision.ErrDiscarded // given up during the build: no release Job starts
	}
	release := manifestRelease
	if rev.ReleaseGiven || len(rev.Release) > 0 {
		release = rev.Release
	}
	if len(release) > 0 {
		run := func(jctx context.Context) (int, error) {
			return s.runCommand(jctx, rev, dir, release, vars, redactor, "release")
		}
		if err := runRelease(ctx, s.Clock, rev, jobs, run); err != nil {
			return nil, err
		}
	}
	if jobs.Discarded(ctx) {
		return nil, revision.ErrDiscarded // cancelled while building or releasing: never started
	}
	return s.newLaunch(rev, dir, plan, m, vars, redactor), nil
}

// newLaunch is what starts a built revision's instances: its process types are the ones its
// plan declares (tori.json's processes, a Procfile), or one web running the start line.
func (s *SourceRuntime) newLaunch(rev revision.Revision, dir string, plan buildplan.Plan, m Manifest, vars map[string]string, r *Redactor) *sourceLaunch {
	return &sourceLaunch{s: s, rev: rev, dir: dir, healthPath: m.HealthPath, vars: vars, redactor: r, procs: plan.ProcessList()}
}

// launcher reads a prepared revision back from its tree (after a nap or an agent restart),
// without rebuilding or re-running its release Job.
func (s *SourceRuntime) launcher(ctx context.Context, rev revision.Revision) (launcher, error) {
	if err := s.Identities.Disk(rev.AppID); err != nil {
		return nil, err
	}
	dir := s.Identities.Tree(rev.AppID, rev.DeployID)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("the revision's tree is gone: %w", err)
	}
	// Planned again from the tree, as it was before the build (the manifest is read anew
	// the same way): the start line and its environment.
	plan, m, _, err := s.planBuild(dir)
	if err != nil {
		return nil, err
	}
	m.Start = plan.Start
	vars, err := openEnv(ctx, s.Env, rev)
	if err != nil {
		return nil, err
	}
	return s.newLaunch(rev, dir, plan, m, withPlanEnv(vars, plan), NewRedactor(vars)), nil
}

func (s *SourceRuntime) unpack(ctx context.Context, rev revision.Revision, dir string) error {
	if err := os.RemoveAll(dir); err != nil { // a half-done earlier attempt
		return err
	}
	f, err := s.Artifacts.Open(ctx, rev.AppID, rev.DeployID)
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
	return s.Identities.Own(rev.AppID, dir)
}

// forgetApp drops what the sandbox holds for a deleted app, once its processes are
// stopped: its network namespace, its cgroup (and anything left in it), its output bound.
func (s *SourceRuntime) forgetApp(appID string) {
	s.Sandbox.ReleaseNetwork(appID)
	if s.Sandbox.Cgroups != nil {
		s.Sandbox.Cgroups.Remove(appID) // anything left, then the group
	}
	s.Output.forget(appID)
}
