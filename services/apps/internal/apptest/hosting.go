package apptest

import (
	"context"
	"sync"
)

// Hosting stands in for the deploys service's answer to "does this zone host this deploy":
// a test says which zone hosts which deploy of which app, and with whose snapshot. Nothing
// is hosted until Host says so.
type Hosting struct {
	mu     sync.Mutex
	hosted map[[3]string]string // zone, app, deploy → the deploy whose snapshot it uses
}

// Host makes zone host the app's deploy, which uses envDeployID's snapshot.
func (h *Hosting) Host(zone, appID, deployID, envDeployID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hosted == nil {
		h.hosted = map[[3]string]string{}
	}
	h.hosted[[3]string{zone, appID, deployID}] = envDeployID
}

// Hosts implements usecase.HostingChecker.
func (h *Hosting) Hosts(_ context.Context, zone, appID, deployID string) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	env, ok := h.hosted[[3]string{zone, appID, deployID}]
	return env, ok, nil
}
