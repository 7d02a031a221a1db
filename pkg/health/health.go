// Package health is the process-identity endpoint every service answers on /healthz.
package health

import (
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// Identity names one running process.
type Identity struct {
	Service   string    `json:"service"`
	Version   string    `json:"version"`
	Instance  string    `json:"instance"`
	StartedAt time.Time `json:"startedAt"`
}

// NewIdentity describes the current process, started now.
func NewIdentity(service, version string) Identity {
	host, _ := os.Hostname()
	return Identity{
		Service:   service,
		Version:   version,
		Instance:  host + "-" + uuid.NewString()[:8],
		StartedAt: time.Now().UTC().Truncate(time.Second),
	}
}

// Handler answers 200 with the identity.
func (id Identity) Handler(c *fiber.Ctx) error {
	return c.JSON(id)
}
