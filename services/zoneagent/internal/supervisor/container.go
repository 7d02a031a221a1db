package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
)

// container describes a container of the revision with the sandbox's limits, the plan's
// CPU ceiling, the app's identity, the app's own network (made when missing) and a fresh
// writable folder: like a process's tree, what a container writes does not outlive it (a
// restart, a nap, a deploy).
func (i *ImageRuntime) container(ctx context.Context, rev revision.Revision, name string, vars map[string]string, port int, args []string) (imageruntime.Container, error) {
	network := imageruntime.AppNetworkOf(rev.AppID)
	if err := i.Containers.EnsureNetwork(ctx, network); err != nil {
		return imageruntime.Container{}, err
	}
	uid, gid := i.containerUser(rev.AppID)
	volume, err := i.containerVolume(rev, name, uid, gid)
	if err != nil {
		return imageruntime.Container{}, err
	}
	cpus := rev.CPU
	if cpus <= 0 {
		cpus = minContainerCPUs
	}
	return imageruntime.Container{Name: name, Image: imageruntime.LocalImage(rev.Image), Network: network.Name, Args: args, Env: vars, Port: port, UID: uid, GID: gid, Volume: volume,
		MemoryBytes: i.Sandbox.MemoryBytes, CPUs: cpus, PidsLimit: i.Sandbox.MaxProcesses, TmpBytes: ContainerTmpBytes}, nil
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
func (i *ImageRuntime) containerUser(appID string) (uid, gid uint32) {
	if cred := i.Sandbox.Credential(appID); cred != nil && cred.Uid != 0 && cred.Gid != 0 {
		return cred.Uid, cred.Gid
	}
	return nobody, nobody
}

// containerVolume makes a container's writable folder afresh, owned by the app's uid, under
// the revision's tree (removed with it on discard and on the app's deletion).
func (i *ImageRuntime) containerVolume(rev revision.Revision, name string, uid, gid uint32) (string, error) {
	dir := filepath.Join(i.Identities.Tree(rev.AppID, rev.DeployID), "volumes", name)
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

// instanceContainerName is the container of one instance: web.1 keeps the revision's own
// name (what an agent restart looks for), every other instance gets its name appended.
func instanceContainerName(deployID, ptype string, n int) string {
	if ptype == revision.Web && n == 1 {
		return serviceContainerName(deployID)
	}
	return fmt.Sprintf("%s-%s-%d", serviceContainerName(deployID), ptype, n)
}

// startContainer runs instance n of process type pt in a container: a web instance on a free
// port of the host, returned once it answers its health check; any other without a port.
// The process's command, when declared, replaces the image's own (through the shell). The
// returned proc is the container to the rest of the runner: alive while its log stream
// runs, and stopping it removes the container.
func (i *ImageRuntime) startContainer(ctx context.Context, ln *imageLaunch, pt revision.Process, n int) (*proc, error) {
	rev, r := ln.rev, ln.redactor
	web := pt.Name == revision.Web
	port := 0
	if web {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	rt, name := i.Containers, instanceContainerName(rev.DeployID, pt.Name, n)
	// An earlier attempt, a nap or a previous agent may have left the name taken.
	if err := rt.Remove(ctx, name); err != nil {
		return nil, err
	}
	var args []string
	if pt.Command != "" {
		args = ShellCommand(pt.Command)
	}
	instance := instanceNameOf(rev, pt.Name, n) // previews.go
	ct, err := i.container(ctx, rev, name, instanceEnv(ln.vars, instance), port, args)
	if err != nil {
		return nil, err
	}
	if rev.InstanceMemoryBytes > 0 {
		ct.MemoryBytes = rev.InstanceMemoryBytes
	}
	id, err := rt.RunDetached(ctx, ct)
	if err != nil {
		msg, _ := r.Redact(err.Error())
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + msg}
	}
	logsCtx, stopLogs := context.WithCancel(context.Background())
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, ptype: pt.Name, n: n, port: port, minScale: rev.MinScale, exited: make(chan struct{}), status: -1}
	// By id: a later container of the same instance (a retry, a wake after a crash) takes
	// the name, and stopping this one must not remove it.
	p.cancel = func() {
		i.removeContainer(id)
		stopLogs()
	}
	p.lastUsed.Store(time.Now().UnixNano())
	stdout := instanceLineWriter(i.Logs, r, rev.AppID, rev.DeployID, instance, "stdout")
	stderr := instanceLineWriter(i.Logs, r, rev.AppID, rev.DeployID, instance, "stderr")
	go func() {
		rt.Logs(logsCtx, id, stdout, stderr)
		stdout.Flush()
		stderr.Flush()
		close(p.exited)
	}()
	if web {
		if err := i.Health.wait(p, "/"); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}
