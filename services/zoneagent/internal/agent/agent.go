// Package agent is the zone agent's work: it prepares the revisions the deploys service asks
// for, switches traffic when told, collects discarded and deleted ones, and reports every
// step back over the bus.
package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/store"
)

// Runner runs service revisions (source builds as local processes, images through a
// container runtime). The static path needs none of it.
type Runner interface {
	// Prepare builds the revision, runs its release Job and starts its process, returning
	// once it is healthy. It reports release steps and reads the Job record through jobs.
	Prepare(ctx context.Context, rev store.Revision, jobs JobRecorder) error
	// Activate makes the revision the one the edge proxies to and stops the previous one.
	Activate(ctx context.Context, rev store.Revision, previous string) error
	// Discard stops a prepared revision and removes its files.
	Discard(ctx context.Context, appID, deployID string) error
	// StopApp stops every process of an app and removes its files.
	StopApp(ctx context.Context, appID string) error
}

// JobRecorder keeps release Jobs by name so that a retry reuses the same Job.
type JobRecorder interface {
	JobState(ctx context.Context, name string) (string, error)
	SetJobState(ctx context.Context, name, deployID, state string) error
	// Step reports a step of the revision to the control plane.
	Step(ctx context.Context, step Step, message string) error
	// Discarded reports whether the control plane gave the revision up meanwhile (cancel,
	// deadline, delete): a finished release Job is then collected and nothing starts.
	Discarded(ctx context.Context) bool
}

// ErrDiscarded ends a preparation the control plane gave up.
var ErrDiscarded = errors.New("agent: revision discarded")

// Agent is one zone's agent.
type Agent struct {
	Zone       string
	Store      *store.Store
	ObjectsDir string
	SitesDir   string
	Table      *edge.Table
	Runner     Runner
	Log        *slog.Logger

	poke     chan struct{}
	mu       sync.Mutex
	busy     map[string]bool        // deploy ids being prepared
	appLocks map[string]*sync.Mutex // one preparation per app at a time
	// forgotten are apps deleted since start. A reload that reads the database before the
	// delete's transaction commits must not bring them back, even for a moment.
	forgotten map[string]bool
}

// Init readies the agent's state; call before Run and before consumers start.
func (a *Agent) Init() {
	a.poke = make(chan struct{}, 1)
	a.busy = map[string]bool{}
	a.appLocks = map[string]*sync.Mutex{}
	a.forgotten = map[string]bool{}
	if a.Log == nil {
		a.Log = slog.Default()
	}
}

// Poke wakes the worker; consumers call it after recording a command.
func (a *Agent) Poke() {
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

// pollEvery bounds how long a command recorded just before a poke waits: the poke can
// arrive before the consumer's transaction commits.
const pollEvery = 500 * time.Millisecond

// Run works until ctx ends: it restores the routing table and then handles revisions as
// commands arrive.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.ReloadRoutes(ctx); err != nil {
		return err
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if err := a.pass(ctx); err != nil && ctx.Err() == nil {
			a.Log.WarnContext(ctx, "zone work pass failed", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.poke:
		case <-t.C:
		}
	}
}

// ReloadRoutes rebuilds the edge's table from the live routes on record.
func (a *Agent) ReloadRoutes(ctx context.Context) error {
	routes, err := a.Store.Routes(ctx)
	if err != nil {
		return err
	}
	domains, err := a.Store.Domains(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]edge.Route, 0, len(routes))
	for _, r := range routes {
		if !a.forgotten[r.AppID] {
			out = append(out, edge.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind})
		}
	}
	hosts := make(map[string]string, len(domains))
	for _, d := range domains {
		hosts[d.Hostname] = d.AppID
	}
	a.Table.Replace(out, hosts)
	return nil
}

func (a *Agent) pass(ctx context.Context) error {
	// Consumers record hostname changes; the table follows within one pass.
	if err := a.ReloadRoutes(ctx); err != nil {
		return err
	}
	revs, err := a.Store.Work(ctx)
	if err != nil {
		return err
	}
	for _, r := range revs {
		a.mu.Lock()
		busy := a.busy[r.DeployID]
		a.mu.Unlock()
		switch {
		case busy:
			continue // its preparation looks at discard and activate when it ends
		case r.DiscardWanted:
			err = errors.Join(err, a.discard(ctx, r))
		case r.State == store.StatePending || r.State == store.StatePreparing:
			a.startPrepare(ctx, r)
		case r.State == store.StateReady && r.ActivateWanted:
			err = errors.Join(err, a.activate(ctx, r))
		}
	}
	return err
}

func (a *Agent) startPrepare(ctx context.Context, r store.Revision) {
	a.mu.Lock()
	a.busy[r.DeployID] = true
	lock := a.appLocks[r.AppID]
	if lock == nil {
		lock = &sync.Mutex{}
		a.appLocks[r.AppID] = lock
	}
	a.mu.Unlock()
	go func() {
		defer func() {
			a.mu.Lock()
			delete(a.busy, r.DeployID)
			a.mu.Unlock()
			a.Poke()
		}()
		// A new deploy waits for an earlier one of the same app (its release Job above all);
		// the wait counts against its 20-minute deadline, which the control plane keeps.
		lock.Lock()
		defer lock.Unlock()
		a.prepare(ctx, r)
	}()
}

// openArtifact reads an artifact from the object store the deploys service writes.
func (a *Agent) openArtifact(key string) (io.ReadCloser, error) {
	return artifact.OpenObject(a.ObjectsDir, key)
}
