package supervisor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// proc is one running service: a local process, or a container (then cmd is nil, exited
// closes when its log stream ends, and cancel removes it).
type proc struct {
	appID, deployID string
	port            int
	minScale        int64
	sandbox         *sandbox.Sandboxed // nil for a container
	// transport reaches the process: in its app's network namespace for a sandbox; nil
	// (the default, to 127.0.0.1:port on the host) for a container.
	transport *http.Transport
	cancel    func()
	exited    chan struct{}
	lastUsed  atomic.Int64 // unix nanoseconds of the last wake or dial by the edge (instances.go)
	stopOnce  sync.Once
}

// stop ends the process group (or removes the container) and waits for it.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.exited
		if p.transport != nil {
			p.transport.CloseIdleConnections()
		}
	})
}

func (p *proc) Close() error { p.stop(); return nil }

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs the manifest's start command with the deploy's environment and PORT and waits
// until it answers its health check.
func (l *Local) start(ctx context.Context, rev revision.Revision, dir string, m Manifest, vars map[string]string, r *Redactor) (*proc, error) {
	_, span := startSpan(ctx, "zone start", rev) // trace.go: up to healthy, not the process's life
	defer span.End()
	// The process outlives the preparation's context; stop() ends it.
	stdout := l.newLineWriter(r, rev.AppID, rev.DeployID, "stdout")
	stderr := l.newLineWriter(r, rev.AppID, rev.DeployID, "stderr")
	// The port is free in the app's own network namespace (its previous revision may still
	// be serving there on another); the edge dials it there, with no port on the host.
	netns, err := l.Sandbox.Network(context.Background(), rev.AppID)
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	port, err := sandbox.FreePortIn(netns)
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	sb, err := l.Sandbox.Start(context.Background(), sandbox.Spec{AppID: rev.AppID, Dir: dir, Argv: StartCommand(m.Start),
		Env: sandbox.Environ(vars, port), CPU: rev.CPU, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, port: port, minScale: rev.MinScale, sandbox: sb, cancel: sb.Kill, exited: make(chan struct{}),
		transport: appTransport(sb.DialIn(port))}
	p.lastUsed.Store(time.Now().UnixNano())
	go func() {
		l.watchMemory(sb, rev.AppID, rev.DeployID)
		stdout.Flush()
		stderr.Flush()
		close(p.exited)
	}()
	if err := l.waitHealthy(p, m.HealthPath); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (l *Local) waitHealthy(p *proc, path string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if p.transport != nil {
		client.Transport = p.transport
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
	deadline := time.Now().Add(l.HealthTimeout)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		if !p.alive() {
			return &revision.FailError{Code: CodeHealthFailed, Message: "the process exited before answering its health check"}
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		time.Sleep(healthPoll(attempt))
	}
	return &revision.FailError{Code: CodeHealthFailed, Message: fmt.Sprintf("no healthy answer on $PORT%s within %s", path, l.HealthTimeout)}
}

// Activate makes the prepared process the app's and stops the one before it. After an agent
// restart nothing is prepared in memory; the process then starts on the first request.
func (l *Local) Activate(_ context.Context, rev revision.Revision, _ string) error {
	l.mu.Lock()
	l.init()
	p := l.prepared[rev.DeployID]
	delete(l.prepared, rev.DeployID)
	old := l.active[rev.AppID]
	if p != nil {
		l.active[rev.AppID] = p
	} else {
		delete(l.active, rev.AppID)
	}
	l.mu.Unlock()
	if old != nil && old != p {
		old.stop()
	}
	return nil
}

// oomPoll is how often a running sandbox's memory kills are looked for; a child killed while
// its parent lives on is reported within it.
const oomPoll = time.Second

// watchMemory waits for the sandbox to end and writes a `system` line to the app's log each
// time the kernel killed one of its processes for going over the app's memory (what Heroku
// calls R15), so the customer learns why a process vanished. It returns the sandbox's error.
func (l *Local) watchMemory(sb *sandbox.Sandboxed, appID, deployID string) error {
	seen := sb.OOMKillsAtStart()
	report := func() {
		n := l.Sandbox.Cgroups.OOMKills(appID)
		if n > seen {
			oomKills.Add(float64(n - seen)) // metrics.go
		}
		if n > seen && l.Logs != nil {
			l.Logs.Line(appID, deployID, "system", fmt.Sprintf(
				"R15 memory quota exceeded: the kernel killed %d process(es) of this app over its %d-byte memory limit", n-seen, l.Sandbox.MemoryBytes), 0)
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

// appIdleConns is how many kept-alive connections the edge holds to one process between
// requests. A visitor's request past them dials anew, through the app's network namespace:
// with 16, 64 concurrent visitors made the edge dial for most requests (a sixth of its CPU in
// bench-edge's profile). 64 covers that load and stays a sixteenth of a process's 1,024 open
// files; an idle connection is closed after 30 s.
const appIdleConns = 64

// appTransport reaches a sandboxed process through dial.
func appTransport(dial func(context.Context, string, string) (net.Conn, error)) *http.Transport {
	return &http.Transport{DialContext: dial, MaxIdleConnsPerHost: appIdleConns, IdleConnTimeout: 30 * time.Second}
}

// healthPoll is how often a starting process's port is tried: fast at first (a woken app
// usually answers within tens of milliseconds), then backing off.
func healthPoll(attempt int) time.Duration {
	return min(time.Duration(attempt+1)*5*time.Millisecond, 100*time.Millisecond)
}
