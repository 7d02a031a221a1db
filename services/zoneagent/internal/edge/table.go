// Package edge is the zone's public face: it serves each live app at <slug>.<APPS_DOMAIN>,
// static sites from the zone's site store (internal/sites) and services by proxy to their
// process.
package edge

import (
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/cowmap"
	"tori.dev/services/zoneagent/internal/revision"
)

// Route is one live app.
type Route struct {
	AppID    string
	Slug     string
	DeployID string
	Kind     revision.Kind
	// PreviewID is set on a preview's route (previewtable.go): its proxy and its wake are
	// the preview's, never the app's live revision's.
	PreviewID string `json:",omitempty"`
}

// Table is the routing table. Readers never lock. Each change is to one app or one
// hostname and copies only the shard it touches (internal/cowmap), so a deploy costs the same at
// 10 apps and at 10,000; a request sees each app before or after a change, never half of
// it. Replace swaps a whole new table in at once.
type Table struct {
	mu sync.Mutex // serializes writers
	p  atomic.Pointer[tables]
	// paused maps an app to when it stops being served (its account's payment-failure
	// hold); apart from the routes, so a switch during a hold keeps it.
	paused atomic.Pointer[cowmap.Map[time.Time]]
	// pausedCount lets the request path skip the pause lookup while no app is under a hold.
	pausedCount atomic.Int64
	// hostsVersion moves whenever the set of served custom hostnames may have changed, so a
	// caller that lists them (certificates) lists them only then.
	hostsVersion atomic.Uint64
	// previews are the previews by id, live and removed (previewtable.go).
	previews atomic.Pointer[map[string]Preview]
	// follow, when set (Follow), hears every change after it is installed, under mu, so
	// the edge process's copy gets the changes in the order they were made.
	follow func(Change)
}

// tables is one version of the routing table; its maps change shard by shard.
type tables struct {
	bySlug *cowmap.Map[Route]
	byApp  *cowmap.Map[Route]
	// hostApp are the active custom hostnames and the app each belongs to, whether or not
	// the app serves yet: a hostname recorded before the app's first deploy is served from
	// the moment its route is set.
	hostApp *cowmap.Map[string]
}

// NewTable returns an empty table.
func NewTable() *Table {
	t := &Table{}
	t.p.Store(&tables{bySlug: cowmap.New[Route](nil), byApp: cowmap.New[Route](nil), hostApp: cowmap.New[string](nil)})
	t.paused.Store(cowmap.New[time.Time](nil))
	return t
}

// Pause installs the apps under a hold, each with the moment its serving stops (the whole
// set: the runtime's start, a follower's first view).
func (t *Table) Pause(from map[string]time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused.Store(cowmap.New(from))
	t.pausedCount.Store(int64(len(from)))
	t.tell(Change{Op: OpPause, Paused: from})
}

// PauseApp sets when one app stops being served (nil: it is under no hold).
func (t *Table) PauseApp(appID string, from *time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.paused.Load()
	_, had := m.Get(appID)
	switch {
	case from != nil:
		if cur, ok := m.Get(appID); ok && cur.Equal(*from) {
			return
		}
		m.Put(appID, *from)
		if !had {
			t.pausedCount.Add(1)
		}
	case had:
		m.Delete(appID)
		t.pausedCount.Add(-1)
	default:
		return
	}
	t.tell(Change{Op: OpPauseApp, AppID: appID, From: from})
}

// Paused reports whether the app's serving has stopped at now.
func (t *Table) Paused(appID string, now time.Time) bool {
	if t.pausedCount.Load() == 0 {
		return false
	}
	from, ok := t.paused.Load().Get(appID)
	return ok && !now.Before(from)
}

// Lookup finds the live app with slug.
func (t *Table) Lookup(slug string) (Route, bool) {
	return t.p.Load().bySlug.Get(slug)
}

// LookupHost finds the live app an active custom hostname belongs to.
func (t *Table) LookupHost(host string) (Route, bool) {
	cur := t.p.Load()
	app, ok := cur.hostApp.Get(host)
	if !ok {
		return Route{}, false
	}
	return cur.byApp.Get(app)
}

// Hosts lists the active custom hostnames of live apps.
func (t *Table) Hosts() []string {
	cur := t.p.Load()
	var out []string
	cur.hostApp.Range(func(host, app string) {
		if _, ok := cur.byApp.Get(app); ok {
			out = append(out, host)
		}
	})
	return out
}

// HostsVersion changes whenever Hosts may have: a caller that keeps something per hostname
// lists them again only then.
func (t *Table) HostsVersion() uint64 { return t.hostsVersion.Load() }

// Replace installs a new table built from routes and hostnames (hostname → app id).
func (t *Table) Replace(routes []Route, hosts map[string]string) {
	bySlug := make(map[string]Route, len(routes))
	byApp := make(map[string]Route, len(routes))
	for _, r := range routes {
		bySlug[r.Slug] = r
		byApp[r.AppID] = r
	}
	next := &tables{bySlug: cowmap.New(bySlug), byApp: cowmap.New(byApp), hostApp: cowmap.New(hosts)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Store(next)
	t.hostsVersion.Add(1)
	t.tell(Change{Op: OpReplace, Routes: routes, Hosts: hosts})
}

// Set installs one app's route, replacing the app's previous one (its hostnames follow).
// The zone calls it before it reports the switch, so whoever hears of the switch finds the
// edge already serving it.
func (t *Table) Set(r Route) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.p.Load()
	old, had := cur.byApp.Get(r.AppID)
	if had && old == r {
		return
	}
	cur.bySlug.Put(r.Slug, r)
	cur.byApp.Put(r.AppID, r)
	if had && old.Slug != r.Slug {
		cur.dropSlug(old.Slug, r.AppID)
	}
	if !had {
		t.hostsVersion.Add(1)
	}
	t.tell(Change{Op: OpSet, Route: r})
}

// dropSlug removes slug's route if it is still appID's (another app may have taken it).
func (c *tables) dropSlug(slug, appID string) {
	if o, ok := c.bySlug.Get(slug); ok && o.AppID == appID {
		c.bySlug.Delete(slug)
	}
}

// Unset drops an app's route, keeping its hostnames and previews: what an activation set
// before a commit that failed leaves when the app had no route on record.
func (t *Table) Unset(appID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.unsetLocked(appID) {
		return
	}
	t.tell(Change{Op: OpUnset, AppID: appID})
}

func (t *Table) unsetLocked(appID string) bool {
	cur := t.p.Load()
	old, ok := cur.byApp.Get(appID)
	if !ok {
		return false
	}
	cur.dropSlug(old.Slug, appID)
	cur.byApp.Delete(appID)
	t.hostsVersion.Add(1)
	return true
}

// SetHost points an active custom hostname at an app; appID "" stops routing it.
func (t *Table) SetHost(host, appID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.p.Load()
	old, had := cur.hostApp.Get(host)
	switch {
	case appID == "" && !had, appID != "" && had && old == appID:
		return
	case appID == "":
		cur.hostApp.Delete(host)
	default:
		cur.hostApp.Put(host, appID)
	}
	t.hostsVersion.Add(1)
	t.tell(Change{Op: OpHost, Host: host, AppID: appID})
}

// RemoveApp drops an app at once (a delete must stop serving before anything else happens):
// its route, and with it its hostnames, and its previews.
func (t *Table) RemoveApp(appID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unsetLocked(appID)
	t.removeAppPreviews(appID)
	t.tell(Change{Op: OpRemoveApp, AppID: appID})
}

// Route finds the live route of an app by its id (the runtime wakes the revision its own
// table names, never one the edge names).
func (t *Table) Route(appID string) (Route, bool) {
	return t.p.Load().byApp.Get(appID)
}
