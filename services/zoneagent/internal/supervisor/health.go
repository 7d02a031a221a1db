package supervisor

import (
	"fmt"
	"net/http"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// Health is how a new process (or container) is known to be ready: it answers a request
// on its port below 500 within Timeout.
type Health struct {
	// Timeout bounds how long a new process may take to answer its health check; 0 is a
	// minute.
	Timeout time.Duration
}

func (h Health) timeout() time.Duration {
	if h.Timeout == 0 {
		return time.Minute
	}
	return h.Timeout
}

// wait asks p for path until it answers, it exits, or the timeout passes.
func (h Health) wait(p *proc, path string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if p.transport != nil {
		client.Transport = p.transport
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
	deadline := time.Now().Add(h.timeout())
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
	return &revision.FailError{Code: CodeHealthFailed, Message: fmt.Sprintf("no healthy answer on $PORT%s within %s", path, h.timeout())}
}

// healthPoll is how often a starting process's port is tried: fast at first (a woken app
// usually answers within tens of milliseconds), then backing off.
func healthPoll(attempt int) time.Duration {
	return min(time.Duration(attempt+1)*5*time.Millisecond, 100*time.Millisecond)
}
