// Package usecase is the zone agent's use cases: it records the commands the deploys service
// sends, prepares the revisions they ask for, switches traffic when told, collects discarded
// and deleted ones, and reports every step back over the bus. Every state change goes
// through the state machine of internal/revision.
package usecase

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sites"
)

// Deps are what an Agent is built from.
type Deps struct {
	Zone  string
	Store Store
	// Artifacts is how a revision's artifact is fetched (artifact.Fetcher).
	Artifacts artifact.Source
	// Sites are the zone's static sites in its bucket, published straight from the
	// artifact's stream. Without Sites (a zone of services only, in tests), static deploys
	// fail.
	Sites  *sites.Store
	Table  *edge.Table
	Runner Runner // nil on a zone that runs no services
	Log    *slog.Logger
}

// Agent is one zone's agent.
type Agent struct {
	zone      string
	store     Store
	artifacts artifact.Source
	sites     *sites.Store
	table     *edge.Table
	runner    Runner
	log       *slog.Logger

	poke     chan struct{}
	passMu   sync.Mutex // the poll job and pokes never run two passes at once
	mu       sync.Mutex
	busy     map[string]bool        // deploy ids being prepared
	appLocks map[string]*sync.Mutex // one preparation per app at a time
	// forgotten are apps deleted since start. A reload that reads the database before the
	// delete's transaction commits must not bring them back, even for a moment.
	forgotten map[string]bool
	// removedPreviews are previews removed since start, for the same reason (previews.go).
	removedPreviews map[string]bool
	// changed are what consumers changed since the last pass, and recheck what a pass read
	// once already and reads once more at the time given (routing.go).
	changed map[routeChange]bool
	recheck map[routeChange]time.Time
}

// New builds an agent ready for its consumers and its Run.
func New(d Deps) (*Agent, error) {
	if d.Store == nil || d.Table == nil || d.Artifacts == nil {
		return nil, errors.New("usecase: an agent needs a store, a routing table and an artifact source")
	}
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &Agent{
		zone: d.Zone, store: d.Store, artifacts: d.Artifacts, sites: d.Sites, table: d.Table,
		runner: d.Runner, log: log,
		poke: make(chan struct{}, 1), busy: map[string]bool{}, appLocks: map[string]*sync.Mutex{},
		forgotten: map[string]bool{}, removedPreviews: map[string]bool{},
		changed: map[routeChange]bool{}, recheck: map[routeChange]time.Time{},
	}, nil
}

// Zone is the zone the agent serves.
func (a *Agent) Zone() string { return a.zone }

// Poke wakes the worker; consumers call it once the transaction that recorded a command has
// committed (bus.Tx.AfterCommit): a pass woken earlier would find nothing and the command
// would wait for the next poll.
func (a *Agent) Poke() {
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

// pollEvery bounds how long work waits that no poke announced (a pass that failed, work on
// record from before a restart).
const pollEvery = 500 * time.Millisecond

// Run loads the routing table (the only time it is read whole: routing.go), then handles
// revisions as commands poke it, until ctx ends. PollJob covers work that no poke announced.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.ReloadRoutes(ctx); err != nil {
		return err
	}
	for {
		if err := a.pass(ctx); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "zone work pass failed", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.poke:
		}
	}
}

// PollJob is the periodic pass that picks up what no poke announced in time.
func (a *Agent) PollJob() lifecycle.Job {
	return lifecycle.Job{Name: "zone work pass", Every: pollEvery, Run: func(ctx context.Context) (int64, error) {
		return 0, a.pass(ctx)
	}}
}

// ReloadRoutes rebuilds the edge's table from the live routes on record: once, at start
// (and in tests); passes follow changes one app at a time (routing.go). It waits for a pass
// in progress: a table read before an activation commits must not replace the table after
// the activation put its route in (the zone has reported it live by then).
func (a *Agent) ReloadRoutes(ctx context.Context) error {
	a.passMu.Lock()
	defer a.passMu.Unlock()
	return a.reloadRoutes(ctx)
}

// reloadRoutes is ReloadRoutes for a caller that holds passMu.
func (a *Agent) reloadRoutes(ctx context.Context) error {
	routes, err := a.store.Routes(ctx)
	if err != nil {
		return err
	}
	domains, err := a.store.Domains(ctx)
	if err != nil {
		return err
	}
	paused, err := a.store.PausedApps(ctx)
	if err != nil {
		return err
	}
	previews, err := a.loadPreviews(ctx) // previews.go
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]edge.Route, 0, len(routes))
	for _, r := range routes {
		if !a.forgotten[r.AppID] {
			out = append(out, edgeRoute(r))
		}
	}
	hosts := make(map[string]string, len(domains))
	for _, d := range domains {
		if !a.forgotten[d.AppID] {
			hosts[d.Hostname] = d.AppID
		}
	}
	a.table.Replace(out, hosts)
	a.table.Pause(paused)
	a.reloadPreviews(previews)
	return nil
}

func (a *Agent) pass(ctx context.Context) error {
	a.passMu.Lock()
	defer a.passMu.Unlock()
	// Consumers record hostname and hold changes; the table follows within one pass, one
	// changed hostname or account at a time (routing.go).
	refreshErr := a.refreshRoutes(ctx)
	revs, err := a.store.Work(ctx)
	if err != nil {
		return errors.Join(refreshErr, err)
	}
	err = refreshErr
	for _, r := range revs {
		a.mu.Lock()
		busy := a.busy[r.DeployID]
		a.mu.Unlock()
		switch {
		case busy:
			continue // its preparation looks at discard and activate when it ends
		case r.DiscardWanted:
			err = errors.Join(err, a.discard(ctx, r))
		case r.State.Unprepared():
			a.startPrepare(ctx, r)
		case r.State == revision.StateReady && r.ActivateWanted:
			err = errors.Join(err, a.activate(ctx, r))
		}
	}
	return err
}

func (a *Agent) startPrepare(ctx context.Context, r revision.Revision) {
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

// move makes a state change through the state machine and records it in tx.
func move(ctx context.Context, tx Tx, r *revision.Revision, to revision.State) error {
	from := r.State
	if err := r.MoveTo(to); err != nil {
		return err
	}
	return tx.SetState(ctx, r.DeployID, from, to)
}

// openArtifact streams a revision's artifact from the object store, by a URL the deploys
// service hands this zone now.
func (a *Agent) openArtifact(ctx context.Context, r revision.Revision) (io.ReadCloser, error) {
	return a.artifacts.Open(ctx, r.AppID, r.DeployID)
}
