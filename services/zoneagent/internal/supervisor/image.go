package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"tori.dev/contract/limits"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/usecase"
)

// ImageRuntime runs image revisions through the zone's container runtime: it pulls the
// image, runs the release Job in a container of its own, and starts the service's
// container on a free port of the host, healthy. Each container gets the app's uid, the
// app's own network, the sandbox's limits and a fresh writable folder in the revision's
// tree.
type ImageRuntime struct {
	// Containers runs image revisions; nil where the zone has no container runtime, and
	// image deploys then fail with image_runtime_unavailable.
	Containers imageruntime.ContainerRuntime
	// Identities gives containers the app's uid and their volumes a place in the revision's tree.
	Identities *Identities
	// Sandbox's limits (memory, processes) are the containers' too.
	Sandbox *sandbox.Sandbox
	Env     EnvOpener
	// Logs receives pulls', release Jobs' and containers' output.
	Logs LogSink
	// Clock measures the release limit (which includes the pull); nil is the real one.
	Clock  Clock
	Health Health
	Log    *slog.Logger
}

// Failure codes of image revisions, beside the ones source revisions share.
const (
	CodeImagePullFailed  = "image_pull_failed"
	CodeImagePullTimeout = "image_pull_timeout"
)

// serviceContainerName is the container an image revision's service runs in.
func serviceContainerName(deployID string) string { return "tori-" + deployID }

// removeTimeout bounds an `rm -f` made after the work that wanted it has ended.
const removeTimeout = time.Minute

// prepare pulls the image, runs its release Job and starts its container, healthy. It
// follows the source path step for step: the Job record, a give-up between steps, the
// health check and the prepared process the switch takes.
func (i *ImageRuntime) prepare(ctx context.Context, rev revision.Revision, jobs usecase.JobRecorder) (launcher, error) {
	if i == nil || i.Containers == nil {
		return nil, &revision.FailError{Code: revision.CodeNoRuntime, Message: "image deploys need a container runtime and this zone has none; set ZONE_IMAGE_RUNTIME (docker or podman) on a zone that has one"}
	}
	if rev.Image == "" || strings.HasPrefix(rev.Image, "-") {
		// A leading dash would be read as an option of `run`; the control plane never sends one.
		return nil, &revision.FailError{Code: revision.CodeInvalidArtifact, Message: "the deploy names no usable image"}
	}
	vars, err := openEnv(ctx, i.Env, rev)
	if err != nil {
		return nil, err
	}
	if err := imageruntime.CheckEnvFile(vars); err != nil {
		return nil, &revision.FailError{Code: CodeEnvUnavailable, Message: err.Error()}
	}
	redactor := NewRedactor(vars)
	pulled := false
	if len(rev.Release) > 0 {
		// The contract's 10 minutes of the release Job include the pull.
		err := runRelease(ctx, i.Clock, rev, jobs, func(jctx context.Context) (int, error) {
			if err := i.pull(jctx, rev, redactor, "release"); err != nil {
				return -1, err
			}
			pulled = true
			return i.runReleaseContainer(jctx, rev, vars, redactor)
		})
		if err != nil {
			return nil, err
		}
	}
	if !pulled {
		// No Job, or one that succeeded before a retry: the image may still be missing here.
		_, err := withinLimit(ctx, i.Clock, limits.ReleaseLimit, func(jctx context.Context) (int, error) {
			return -1, i.pull(jctx, rev, redactor, "build")
		})
		if errors.Is(err, errTimedOut) {
			return nil, &revision.FailError{Code: CodeImagePullTimeout, Message: fmt.Sprintf("pulling %s exceeded %s", rev.Image, limits.ReleaseLimit)}
		}
		if err != nil {
			return nil, err
		}
	}
	if jobs.Discarded(ctx) {
		return nil, revision.ErrDiscarded // cancelled while releasing: never started
	}
	return i.newLaunch(rev, vars, redactor), nil
}

// newLaunch is what starts an image revision's instances: its declared process types, or one
// web running the image's own command.
func (i *ImageRuntime) newLaunch(rev revision.Revision, vars map[string]string, r *Redactor) *imageLaunch {
	return &imageLaunch{i: i, rev: rev, vars: vars, redactor: r, procs: revision.ProcessesOrWeb(rev.Processes, "")}
}

// pull fetches the revision's image, its progress going to stream.
func (i *ImageRuntime) pull(ctx context.Context, rev revision.Revision, r *Redactor, stream string) error {
	out := newLineWriter(i.Logs, r, rev.AppID, rev.DeployID, stream)
	err := i.Containers.Pull(ctx, rev.Image, out)
	out.Flush()
	if err != nil && ctx.Err() == nil {
		return &revision.FailError{Code: CodeImagePullFailed, Message: fmt.Sprintf("pulling %s failed: %v", rev.Image, err)}
	}
	return err
}

// runReleaseContainer runs the release command in a container named after the Job. When
// ctx ends first (the time limit), killing the CLI does not stop the container, so it is
// removed by name.
func (i *ImageRuntime) runReleaseContainer(ctx context.Context, rev revision.Revision, vars map[string]string, r *Redactor) (int, error) {
	name := releaseJobName(rev.DeployID)
	// A Job an earlier agent left running holds the name; it is redone under the same one.
	if err := i.Containers.Remove(ctx, name); err != nil {
		return -1, err
	}
	ct, err := i.container(ctx, rev, name, vars, 0, rev.Release)
	if err != nil {
		return -1, err
	}
	out := newLineWriter(i.Logs, r, rev.AppID, rev.DeployID, "release")
	err = i.Containers.Run(ctx, ct, out)
	out.Flush()
	if ctx.Err() != nil {
		i.removeContainer(name)
	}
	return exitStatus(err), err
}

// forgetApp removes a deleted app's container network, once its containers are gone.
func (i *ImageRuntime) forgetApp(ctx context.Context, appID string) {
	if i == nil || i.Containers == nil {
		return
	}
	if err := i.Containers.RemoveNetwork(ctx, imageruntime.AppNetworkOf(appID)); err != nil {
		logOr(i.Log).WarnContext(ctx, "remove an app's container network", "app", appID, "err", err.Error())
	}
}

// removeContainer removes a container (by name or id) after the work that ran it has
// ended; a failure is logged, and the next start or agent restart removes it by name.
func (i *ImageRuntime) removeContainer(ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := i.Containers.Remove(ctx, ref); err != nil {
		logOr(i.Log).WarnContext(ctx, "remove container", "container", ref, "err", err.Error())
	}
}

// launcher reads a live image revision back (after a nap or a restart) without pulling or
// re-running its release Job.
func (i *ImageRuntime) launcher(ctx context.Context, rev revision.Revision) (launcher, error) {
	if i == nil || i.Containers == nil {
		return nil, fmt.Errorf("image revision %s and no container runtime", rev.DeployID)
	}
	vars, err := openEnv(ctx, i.Env, rev)
	if err != nil {
		return nil, err
	}
	return i.newLaunch(rev, vars, NewRedactor(vars)), nil
}
