package supervisor

import (
	"context"
	"fmt"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// startInstance runs instance n of process type pt (its command through the shell, as a start
// line) with the deploy's environment and TORI_PROCESS, in a sandbox of its own. A web
// instance gets a PORT of its own in the app's network namespace and is returned once it
// answers its health check; any other type runs without a port.
func (s *SourceRuntime) startInstance(ctx context.Context, ln *sourceLaunch, pt revision.Process, n int) (*proc, error) {
	rev := ln.rev
	_, span := startSpan(ctx, "zone start", rev) // trace.go: up to healthy, not the process's life
	defer span.End()
	name := instanceNameOf(rev, pt.Name, n) // previews.go
	web := pt.Name == revision.Web
	port := 0
	if web {
		// The port is free in the app's own network namespace (its other instances and its
		// previous revision may be serving there on others); the edge dials it there.
		var err error
		if port, err = s.Sandbox.FreePort(context.Background(), rev.AppID); err != nil {
			return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
		}
	}
	// The process outlives the preparation's context; stop() ends it.
	stdout := s.Output.instanceWriter(ln.redactor, rev.AppID, rev.DeployID, name, "stdout")
	stderr := s.Output.instanceWriter(ln.redactor, rev.AppID, rev.DeployID, name, "stderr")
	sb, err := s.Sandbox.Start(context.Background(), sandbox.Spec{AppID: rev.AppID, Dir: ln.dir, Argv: StartCommand(pt.Command),
		Env: sandbox.Environ(instanceEnv(ln.vars, name), port), CPU: rev.CPU, Stdout: stdout, Stderr: stderr,
		Instance: name, MemoryBytes: rev.InstanceMemoryBytes})
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, ptype: pt.Name, n: n, port: port, minScale: rev.MinScale, sandbox: sb,
		cancel: sb.Kill, exited: make(chan struct{})}
	if web {
		p.transport = appTransport(sb.DialIn(port))
	}
	p.lastUsed.Store(time.Now().UnixNano())
	go func() {
		err := s.watchMemory(sb, rev.AppID, rev.DeployID, name)
		stdout.Flush()
		stderr.Flush()
		p.status = exitStatus(err)
		close(p.exited)
	}()
	if web {
		if err := s.Health.wait(p, ln.healthPath); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}

// runCommand runs a command of the revision's tree in the sandbox to completion, its output
// going to stream. Cancelling ctx kills its process group.
func (s *SourceRuntime) runCommand(ctx context.Context, rev revision.Revision, dir string, argv []string, vars map[string]string, r *Redactor, stream string) (int, error) {
	ctx, span := startSpan(ctx, "zone "+stream, rev) // trace.go
	defer span.End()
	out := s.Output.writer(r, rev.AppID, rev.DeployID, stream)
	spec := sandbox.Spec{AppID: rev.AppID, Dir: dir, Argv: argv, Env: sandbox.Environ(vars, 0), CPU: rev.CPU, Stdout: out, Stderr: out}
	sb, err := s.Sandbox.Start(ctx, s.withBuildCache(spec, stream, vars)) // buildcache.go
	if err != nil {
		return -1, err
	}
	err = s.watchMemory(sb, rev.AppID, rev.DeployID, "")
	out.Flush()
	return exitStatus(err), err
}

// oomPoll is how often a running sandbox's memory kills are looked for; a child killed while
// its parent lives on is reported within it.
const oomPoll = time.Second

// watchMemory waits for the sandbox to end and writes a `system` line to the app's log each
// time the kernel killed one of its processes for going over the app's memory (what Heroku
// calls R15), so the customer learns why a process vanished. It returns the sandbox's error.
func (s *SourceRuntime) watchMemory(sb *sandbox.Sandboxed, appID, deployID, process string) error {
	seen := sb.OOMKillsAtStart()
	report := func() {
		n := sb.OOMKills() // its instance's, or the app's for a build or release Job
		if n > seen {
			oomKills.Add(float64(n - seen)) // metrics.go
			s.Output.instanceSystem(appID, deployID, process, fmt.Sprintf(
				"R15 memory quota exceeded: the kernel killed %d process(es) of this app over its %d-byte memory limit", n-seen, sb.MemoryBytes()))
		}
		seen = max(seen, n)
	}
	for {
		select {
		case <-sb.Done():
			report()
			return sb.Wait()
		case <-time.After(oomPoll):
			report()
		}
	}
}
