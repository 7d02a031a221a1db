package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// proc is one running service: a local process, or a container (then cmd is nil, exited
// closes when its log stream ends, and cancel removes it).
type proc struct {
	appID, deployID string
	port            int
	minScale        int64
	cmd             *exec.Cmd
	cancel          func()
	exited          chan struct{}
	lastUsed        atomic.Int64 // unix nanoseconds of the last proxied request
	stopOnce        sync.Once
}

// stop ends the process group (or removes the container) and waits for it.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.exited
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
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// The process outlives the preparation's context; stop() ends it.
	pctx, cancel := context.WithCancel(context.Background())
	cmd := l.Sandbox.Command(pctx, rev.AppID, dir, StartCommand(m.Start), Environ(vars, dir, port))
	stdout := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "stdout")
	stderr := newLineWriter(l.Logs, r, rev.AppID, rev.DeployID, "stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, &revision.FailError{Code: CodeHealthFailed, Message: "start: " + err.Error()}
	}
	l.limitCPU(ctx, rev, cmd.Process.Pid)
	p := &proc{appID: rev.AppID, deployID: rev.DeployID, port: port, minScale: rev.MinScale, cmd: cmd, cancel: cancel, exited: make(chan struct{})}
	p.lastUsed.Store(time.Now().UnixNano())
	go func() {
		cmd.Wait()
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
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
	deadline := time.Now().Add(l.HealthTimeout)
	for time.Now().Before(deadline) {
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
		time.Sleep(100 * time.Millisecond)
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
