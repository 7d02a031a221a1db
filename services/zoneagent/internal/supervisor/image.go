package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tori.dev/contract/limits"
	"tori.dev/services/zoneagent/internal/app"
	"tori.dev/services/zoneagent/internal/imageruntime"
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
	if err := imageruntime.CheckEnvFile(vars); err != nil {
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
		_, err := l.withinLimit(ctx, limits.ReleaseLimit, func(jctx context.Context) (int, error) {
			return -1, l.pull(jctx, rev, redactor, "build")
		})
		if errors.Is(err, errTimedOut) {
			return &revision.FailError{Code: CodeImagePullTimeout, Message: fmt.Sprintf("pulling %s exceeded %s", rev.Image, limits.ReleaseLimit)}
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
	ct, err := l.container(ctx, rev, name, vars, 0, rev.Release)
	if err != nil {
		return -1, err
	}
	out := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "release")
	err = l.Containers.Run(ctx, ct, out)
	out.Flush()
	if ctx.Err() != nil {
		l.removeContainer(name)
	}
	return exitStatus(err), err
}

// container describes a container of the revision with the sandbox's limits, the plan's
// CPU ceiling, the app's identity, the app's own network (made when missing) and a fresh
// writable folder: like a process's tree, what a container writes does not outlive it (a
// restart, a nap, a deploy).
func (l *Local) container(ctx context.Context, rev revision.Revision, name string, vars map[string]string, port int, args []string) (imageruntime.Container, error) {
	network := imageruntime.AppNetworkOf(rev.AppID)
	if err := l.Containers.EnsureNetwork(ctx, network); err != nil {
		return imageruntime.Container{}, err
	}
	uid, gid := l.containerUser(rev.AppID)
	volume, err := l.containerVolume(rev, name, uid, gid)
	if err != nil {
		return imageruntime.Container{}, err
	}
	cpus := rev.CPU
	if cpus <= 0 {
		cpus = minContainerCPUs
	}
	return imageruntime.Container{Name: name, Image: imageruntime.LocalImage(rev.Image), Network: network.Name, Args: args, Env: vars, Port: port, UID: uid, GID: gid, Volume: volume,
		MemoryBytes: l.Sandbox.MemoryBytes, CPUs: cpus, PidsLimit: l.Sandbox.MaxProcesses, TmpBytes: ContainerTmpBytes}, nil
}

const (
	// minContainerCPUs is the smallest plan's ceiling, for a revision recorded without one.
	minContainerCPUs = 0.25
	// ContainerTmpBytes sizes a container's /tmp.
	// TODO(issue 10, disk quota): take ZONE_APP_DISK_BYTES once the sandbox has it.
	ContainerTmpBytes = 64 << 20
	// nobody is the identity of an app's containers when the agent has none of its own to
	// give (it is not root and ZONE_RUN_AS_USER is unset): never the image's own root.
	nobody = 65534
)

// containerUser is the uid and gid an app's containers run as: the one its processes run
// as. Hook for the per-app uid allocation of issue 10: it answers through
// Sandbox.Credential, so the allocation table feeds containers where it feeds processes.
func (l *Local) containerUser(appID string) (uid, gid uint32) {
	if cred := l.Sandbox.Credential(appID); cred != nil && cred.Uid != 0 && cred.Gid != 0 {
		return cred.Uid, cred.Gid
	}
	return nobody, nobody
}

// containerVolume makes a container's writable folder afresh, owned by the app's uid, under
// the revision's tree (removed with it on discard and on the app's deletion).
func (l *Local) containerVolume(rev revision.Revision, name string, uid, gid uint32) (string, error) {
	dir := filepath.Join(l.tree(rev.AppID, rev.DeployID), "volumes", name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		if !errors.Is(err, fs.ErrPermission) {
			return "", err
		}
		// An agent that is not root cannot give the folder away; the tree above it is
		// private to the agent, so opening this one folder exposes it to no other user.
		if err := os.Chmod(dir, 0o777); err != nil {
			return "", err
		}
	}
	return dir, nil
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
	ct, err := l.container(ctx, rev, name, vars, port, nil)
	if err != nil {
		return nil, err
	}
	id, err := rt.RunDetached(ctx, ct)
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

// removeAppNetwork removes a deleted app's container network, once its containers are gone.
func (l *Local) removeAppNetwork(ctx context.Context, appID string) {
	if l.Containers == nil {
		return
	}
	if err := l.Containers.RemoveNetwork(ctx, imageruntime.AppNetworkOf(appID)); err != nil {
		l.Log.WarnContext(ctx, "remove an app's container network", "app", appID, "err", err.Error())
	}
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
