package supervisor

import (
	"context"
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
	// ptype and n name the instance (web.1, worker.2).
	ptype    string
	n        int
	port     int // 0: not web, nothing to reach
	minScale int64
	sandbox  *sandbox.Sandboxed // nil for a container
	// transport reaches the process: in its app's network namespace for a sandbox; nil
	// (the default, to 127.0.0.1:port on the host) for a container.
	transport *http.Transport
	cancel    func()
	exited    chan struct{}
	lastUsed  atomic.Int64 // unix nanoseconds of the last wake or dial by the edge (instances.go)
	stopOnce  sync.Once
	// status is the exit status, set before exited closes; -1 when it did not exit by itself
	// or is not known (a container).
	status int
}

// name is the instance's name: web.1, worker.2.
func (p *proc) name() string { return revision.InstanceName(p.ptype, p.n) }

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

// stopGrace is how long an instance other than web has to finish after SIGTERM before it is
// killed, as a dyno has on Heroku (a worker finishing its job, a clock saving its place).
const stopGrace = 30 * time.Second

// stopGracefully gives a sandboxed process SIGTERM and stopGrace (sandbox.Terminate), then
// stops it; a container is stopped as stop does.
func (p *proc) stopGracefully() {
	if p.sandbox != nil {
		p.sandbox.Terminate(stopGrace)
	}
	p.stop()
}

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
