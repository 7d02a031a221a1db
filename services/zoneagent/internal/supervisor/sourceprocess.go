package supervisor

import (
	"context"
	"fmt"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// start runs the manifest's start command with the deploy's environment and PORT and waits
// until it answers its health check.
func (s *SourceRuntime) start(ctx context.Context, rev revision.Revision, dir string, m Manifest, vars map[string]string, r *Redactor) (*proc, error) {
	_, span := startSpan(ctx, "zone start", rev) // trace.go: up to healthy, not the process's life
	defer span.End()
	// The process outlives the preparation's context; stop() ends it.
	stdout := s.Output.writer(r, rev.AppID, rev.DeployID, "stdout")
	stderr := s.Output.writer(r, rev.AppID, rev.DeployID, "stderr")
	// The port is free in the app's own network namespace (its previous revision may still
	// be serving there on another); the edge dials it there, with no port on the host.
	netns, err := s.Sandbox.Network(context.Background(), rev.AppID)
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	port, err := sandbox.FreePortIn(netns)
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	sb, err := s.Sandbox.Start(context.Background(), sandbox.Spec{AppID: rev.AppID, Dir: dir, Argv: StartCommand(m.Start),
		Env: sandbox.Environ(vars, port), CPU: rev.CPU, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, port: port, minScale: rev.MinScale, sandbox: sb, cancel: sb.Kill, exited: make(chan struct{}),
		transport: appTransport(sb.DialIn(port))}
	p.lastUsed.Store(time.Now().UnixNano())
	go func() {
		s.watchMemory(sb, rev.AppID, rev.DeployID)
		stdout.Flush()
		stderr.Flush()
		close(p.exited)
	}()
	if err := s.Health.wait(p, m.HealthPath); err != nil {
		p.stop()
		return nil, err
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
	err = s.watchMemory(sb, rev.AppID, rev.DeployID)
	out.Flush()
	return exitStatus(err), err
}

// oomPoll is how often a running sandbox's memory kills are looked for; a child killed while
// its parent lives on is reported within it.
const oomPoll = time.Second

// watchMemory waits for the sandbox to end and writes a `system` line to the app's log each
// time the kernel killed one of its processes for going over the app's memory (what Heroku
// calls R15), so the customer learns why a process vanished. It returns the sandbox's error.
func (s *SourceRuntime) watchMemory(sb *sandbox.Sandboxed, appID, deployID string) error {
	seen := sb.OOMKillsAtStart()
	report := func() {
		n := sb.OOMKills() // its instance's, or the app's for a build or release Job
		if n > seen {
			oomKills.Add(float64(n - seen)) // metrics.go
			s.Output.system(appID, deployID, fmt.Sprintf(
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
