// Package health is how a service process answers for itself: /healthz names the process
// (it is up), and /readyz says whether it may be given work yet.
package health

import (
	"os"
	"sort"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"tori.dev/pkg/buildinfo"
)

// Identity names one running process.
type Identity struct {
	Service   string    `json:"service"`
	Version   string    `json:"version"`
	Commit    string    `json:"commit"` // the git commit the binary was built from (pkg/buildinfo)
	Instance  string    `json:"instance"`
	StartedAt time.Time `json:"startedAt"`

	ready *readiness
}

// NewIdentity describes the current process, started now.
func NewIdentity(service, version string) Identity {
	host, _ := os.Hostname()
	return Identity{
		Service:   service,
		Version:   version,
		Commit:    buildinfo.Commit,
		Instance:  host + "-" + uuid.NewString()[:8],
		StartedAt: time.Now().UTC().Truncate(time.Second),
		ready:     &readiness{waiting: map[string]bool{}},
	}
}

// Handler answers /healthz: 200 with the identity.
func (id Identity) Handler(c *fiber.Ctx) error {
	return c.JSON(id)
}

// readiness is the set of parts a process still waits for.
type readiness struct {
	mu      sync.Mutex
	waiting map[string]bool
	checks  checks // dependencies asked about on every answer (checks.go)
}

// Await registers a part that must be in place before the process takes work, and returns
// what that part calls once it is (a bus.Subscription's Ready: an event published before its
// queue is bound is routed nowhere). Register every part before serving /readyz.
func (id Identity) Await(part string) func() {
	if id.ready == nil {
		return func() {}
	}
	id.ready.mu.Lock()
	id.ready.waiting[part] = true
	id.ready.mu.Unlock()
	return func() {
		id.ready.mu.Lock()
		delete(id.ready.waiting, part)
		id.ready.mu.Unlock()
	}
}

// ReadyHandler answers /readyz: 200 once every awaited part has reported in (it stays so: a
// consumer that later loses the broker resubscribes by itself) and every Check answers, 503
// naming the parts still awaited or, once none is, the dependencies that fail.
func (id Identity) ReadyHandler(c *fiber.Ctx) error {
	var waiting []string
	if id.ready != nil {
		id.ready.mu.Lock()
		for part := range id.ready.waiting {
			waiting = append(waiting, part)
		}
		id.ready.mu.Unlock()
		if len(waiting) == 0 {
			waiting = id.Failing(c.UserContext())
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"error": "not_ready", "code": "not_ready", "waiting": waiting})
	}
	return c.JSON(fiber.Map{"ready": true})
}
