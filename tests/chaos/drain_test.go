//go:build chaos

package chaos

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// drainProbe is an HTTPS log drain on one of the load's apps, received here: the logs
// replicas holding it are SIGKILLed and restarted, the broker and Postgres restarted, and
// still every line the load published for the app must arrive, with few repeats (at least
// once: a batch in flight at a kill comes again). The receiver is the logs service's test
// host (LOGS_DRAIN_TEST_HOST/_CA), the one loopback address a drain may reach.
type drainProbe struct {
	srv  *httptest.Server
	ca   string
	mu   sync.Mutex
	seen map[string]int // message → times received
	// before are the app's lines published before the drain existed: not its to send (a
	// line published before the create answered may be stored on either side of it).
	before map[string]bool
}

// newDrainProbe starts the receiver; its settings go into the stack's environment.
func newDrainProbe(t *testing.T, env map[string]string) *drainProbe {
	p := &drainProbe{seen: map[string]int{}}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc := bufio.NewScanner(r.Body)
		sc.Buffer(nil, 1<<20)
		p.mu.Lock()
		for sc.Scan() {
			var l struct{ Message string }
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				p.seen[l.Message]++
			}
		}
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(p.srv.Close)
	p.ca = filepath.Join(t.TempDir(), "drain-ca.pem")
	if err := os.WriteFile(p.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env["LOGS_DRAIN_TEST_HOST"] = p.srv.Listener.Addr().String()
	env["LOGS_DRAIN_TEST_CA"] = p.ca
	// A killed replica's drain is taken over this long after its last renewal.
	env["LOGS_DRAIN_LEASE"] = "5s"
	return p
}

// attach adds the drain to the app slug through the gateway.
func (p *drainProbe) attach(t *testing.T, l *load, appID, slug string) {
	body, _ := json.Marshal(map[string]string{"url": "https://" + p.srv.Listener.Addr().String() + "/ingest"})
	harness.Eventually(t, 30*time.Second, "the drain created", func() bool {
		status, _, err := l.call(http.MethodPost, "/api/apps/"+slug+"/drains", body, "application/json")
		return err == nil && status == http.StatusCreated
	})
	p.before = map[string]bool{}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.apps {
		if a.id == appID {
			for m := range a.logLines {
				p.before[m] = true
			}
		}
	}
}

// check waits (up to within) for every line the load published for appID and returns how
// many are still missing and how many arrived more than once.
func (p *drainProbe) check(t *testing.T, l *load, appID string, within time.Duration) (lines, missing, repeats int) {
	l.mu.Lock()
	var want []string
	for _, a := range l.apps {
		if a.id == appID {
			for m := range a.logLines {
				if !p.before[m] {
					want = append(want, m)
				}
			}
		}
	}
	l.mu.Unlock()
	deadline := time.Now().Add(within)
	for {
		p.mu.Lock()
		missing, repeats = 0, 0
		for _, m := range want {
			if p.seen[m] == 0 {
				missing++
			}
		}
		for _, n := range p.seen {
			repeats += n - 1
		}
		p.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			return len(want), missing, repeats
		}
		time.Sleep(2 * time.Second)
	}
}
