package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/revision"
)

// Failure codes of image revisions, beside the ones source revisions share.
const (
	CodeImagePullFailed  = "image_pull_failed"
	CodeImagePullTimeout = "image_pull_timeout"
)

// serviceContainerName is the container an image revision's service runs in.
func serviceContainerName(deployID string) string { return "tori-" + deployID }

// removeTimeout bounds an `rm -f` made after the work that wanted it has ended.
const removeTimeout = time.Minute

// prepareImage pulls the image, runs its release Job and starts its container, healthy. It
// follows the source path step for step: the Job record, a give-up between steps, the
// health check and the prepared process the switch takes.
func (l *Local) prepareImage(ctx context.Context, rev revision.Revision, jobs app.JobRecorder) error {
	if l.Containers == nil {
		return &revision.FailError{Code: revision.CodeNoRuntime, Message: "image deploys need a container runtime and this zone has none; set ZONE_IMAGE_RUNTIME (docker or podman) on a zone that has one"}
	}
	if rev.Image == "" || strings.HasPrefix(rev.Image, "-") {
		// A leading dash would be read as an option of `run`; the control plane never sends one.
		return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: "the deploy names no usable image"}
	}
	vars, err := l.openEnv(ctx, rev)
	if err != nil {
		return err
	}
	if err := checkEnvFile(vars); err != nil {
		return &revision.FailError{Code: CodeEnvUnavailable, Message: err.Error()}
	}
	redactor := NewRedactor(vars)
	pulled := false
	if len(rev.Release) > 0 {
		// The contract's 10 minutes of the release Job include the pull.
		err := l.release(ctx, rev, jobs, func(jctx context.Context) (int, error) {
			if err := l.pull(jctx, rev, redactor, "release"); err != nil {
				return -1, err
			}
			pulled = true
			return l.runReleaseContainer(jctx, rev, vars, redactor)
		})
		if err != nil {
			return err
		}
	}
	if !pulled {
		// No Job, or one that succeeded before a retry: the image may still be missing here.
		_, err := l.withinLimit(ctx, ReleaseLimit, func(jctx context.Context) (int, error) {
			return -1, l.pull(jctx, rev, redactor, "build")
		})
		if errors.Is(err, errTimedOut) {
			return &revision.FailError{Code: CodeImagePullTimeout, Message: fmt.Sprintf("pulling %s exceeded %s", rev.Image, ReleaseLimit)}
		}
		if err != nil {
			return err
		}
	}
	if jobs.Discarded(ctx) {
		return revision.ErrDiscarded // cancelled while releasing: never started
	}
	p, err := l.startContainer(ctx, rev, vars, redactor)
	if err != nil {
		return err
	}
	l.keepPrepared(p)
	return nil
}

// pull fetches the revision's image, its progress going to stream.
func (l *Local) pull(ctx context.Context, rev revision.Revision, r *Redactor, stream string) error {
	out := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, stream)
	err := l.Containers.Pull(ctx, rev.Image, out)
	out.Flush()
	if err != nil && ctx.Err() == nil {
		return &revision.FailError{Code: CodeImagePullFailed, Message: fmt.Sprintf("pulling %s failed: %v", rev.Image, err)}
	}
	return err
}

// runReleaseContainer runs the release command in a container named after the Job. When
// ctx ends first (the time limit), killing the CLI does not stop the container, so it is
// removed by name.
func (l *Local) runReleaseContainer(ctx context.Context, rev revision.Revision, vars map[string]string, r *Redactor) (int, error) {
	name := releaseJobName(rev.DeployID)
	// A Job an earlier agent left running holds the name; it is redone under the same one.
	if err := l.Containers.Remove(ctx, name); err != nil {
		return -1, err
	}
	out := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "release")
	err := l.Containers.Run(ctx, l.container(rev, name, vars, 0, rev.Release), out)
	out.Flush()
	if ctx.Err() != nil {
		l.removeContainer(name)
	}
	return exitStatus(err), err
}

// container describes a container of the revision with the sandbox's limits and the plan's
// CPU ceiling.
func (l *Local) container(rev revision.Revision, name string, vars map[string]string, port int, args []string) Container {
	return Container{Name: name, Image: rev.Image, Args: args, Env: vars, Port: port,
		MemoryBytes: l.Sandbox.MemoryBytes, CPUs: rev.CPU, PidsLimit: l.Sandbox.MaxProcesses}
}

// startContainer runs the revision's service container on a free port and waits until it
// answers its health check. The returned proc is the container to the rest of the runner:
// alive while its log stream runs, and stopping it removes the container.
func (l *Local) startContainer(ctx context.Context, rev revision.Revision, vars map[string]string, r *Redactor) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	rt, name := l.Containers, serviceContainerName(rev.DeployID)
	// An earlier attempt, a nap or a previous agent may have left the name taken.
	if err := rt.Remove(ctx, name); err != nil {
		return nil, err
	}
	id, err := rt.RunDetached(ctx, l.container(rev, name, vars, port, nil))
	if err != nil {
		msg, _ := r.Redact(err.Error())
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + msg}
	}
	logsCtx, stopLogs := context.WithCancel(context.Background())
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, port: port, minScale: rev.MinScale, exited: make(chan struct{})}
	// By id: a later container of the same revision (a retry, a wake after a crash) takes
	// the name, and stopping this one must not remove it.
	p.cancel = func() {
		l.removeContainer(id)
		stopLogs()
	}
	p.lastUsed.Store(time.Now().UnixNano())
	stdout := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "stdout")
	stderr := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "stderr")
	go func() {
		rt.Logs(logsCtx, id, stdout, stderr)
		stdout.Flush()
		stderr.Flush()
		close(p.exited)
	}()
	if err := l.waitHealthy(p, "/"); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// removeContainer removes a container (by name or id) after the work that ran it has
// ended; a failure is logged, and the next start or agent restart removes it by name.
func (l *Local) removeContainer(ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := l.Containers.Remove(ctx, ref); err != nil {
		l.Log.WarnContext(ctx, "remove container", "container", ref, "err", err.Error())
	}
}

// wakeContainer starts a live image revision again (after a nap or a restart) without
// pulling or re-running its release Job.
func (l *Local) wakeContainer(ctx context.Context, rev revision.Revision) (*proc, error) {
	if l.Containers == nil {
		return nil, fmt.Errorf("image revision %s and no container runtime", rev.DeployID)
	}
	vars, err := l.openEnv(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.startContainer(ctx, rev, vars, NewRedactor(vars))
}
