// Package edge is the zone's public face: it serves each live app at <slug>.<APPS_DOMAIN>,
// static sites from the zone's site store (internal/sites) and services by proxy to their
// process.
package edge

import (
	"sync"
	"sync/atomic"
	"time"

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

// Table is the routing table. Readers take a snapshot without locking; writers replace it
// whole, so a request sees the table before or after a change, never half of it.
type Table struct {
	mu sync.Mutex // serializes writers
	p  atomic.Pointer[tables]
	// paused maps an app to when it stops being served (its account's payment-failure
	// hold); apart from the routes, so a switch during a hold keeps it.
	paused atomic.Pointer[map[string]time.Time]
	// previews are the previews by id, live and removed (previewtable.go).
	previews atomic.Pointer[map[string]Preview]
	// follow, when set (Follow), hears every change after it is installed, under mu, so
	// the edge process's copy gets the changes in the order they were made.
	follow func(Change)
}

// tables is one immutable version of the routing table.
type tables struct {
	bySlug map[string]Route
	byHost map[string]Route // active custom hostnames
}

// NewTable returns an empty table.
func NewTable() *Table {
	t := &Table{}
	t.p.Store(&tables{bySlug: map[string]Route{}, byHost: map[string]Route{}})
	return t
}

// Pause installs the apps under a hold, each with the moment its serving stops.
func (t *Table) Pause(from map[string]time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused.Store(&from)
	t.tell(Change{Op: OpPause, Paused: from})
}

// Paused reports whether the app's serving has stopped at now.
func (t *Table) Paused(appID string, now time.Time) bool {
	m := t.paused.Load()
	if m == nil {
		return false
	}
	from, ok := (*m)[appID]
	return ok && !now.Before(from)
}

// Lookup finds the live app with slug.
func (t *Table) Lookup(slug string) (Route, bool) {
	r, ok := t.p.Load().bySlug[slug]
	return r, ok
}

// LookupHost finds the live app an active custom hostname belongs to.
func (t *Table) LookupHost(host string) (Route, bool) {
	r, ok := t.p.Load().byHost[host]
	return r, ok
}

// Hosts lists the active custom hostnames of live apps.
func (t *Table) Hosts() []string {
	m := t.p.Load().byHost
	out := make([]string, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	return out
}

// Replace installs a new table built from routes and hostnames (hostname → app id).
func (t *Table) Replace(routes []Route, hosts map[string]string) {
	next := &tables{bySlug: make(map[string]Route, len(routes)), byHost: map[string]Route{}}
	byApp := make(map[string]Route, len(routes))
	for _, r := range routes {
		next.bySlug[r.Slug] = r
		byApp[r.AppID] = r
	}
	for host, app := range hosts {
		if r, ok := byApp[app]; ok {
			next.byHost[host] = r
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Store(next)
	t.tell(Change{Op: OpReplace, Routes: routes, Hosts: hosts})
}

// Set installs one app's route, replacing the app's previous one (and its hostnames' target).
// The zone calls it before it reports the switch, so whoever hears of the switch finds the
// edge already serving it.
func (t *Table) Set(r Route) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.p.Load()
	next := &tables{bySlug: make(map[string]Route, len(old.bySlug)+1), byHost: make(map[string]Route, len(old.byHost))}
	for k, o := range old.bySlug {
		if o.AppID != r.AppID {
			next.bySlug[k] = o
		}
	}
	next.bySlug[r.Slug] = r
	for k, o := range old.byHost {
		if o.AppID == r.AppID {
			o = r
		}
		next.byHost[k] = o
	}
	t.p.Store(next)
	t.tell(Change{Op: OpSet, Route: r})
}

// RemoveApp drops an app at once (a delete must stop serving before anything else happens).
func (t *Table) RemoveApp(appID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.p.Load()
	next := &tables{bySlug: map[string]Route{}, byHost: map[string]Route{}}
	for k, r := range old.bySlug {
		if r.AppID != appID {
			next.bySlug[k] = r
		}
	}
	for k, r := range old.byHost {
		if r.AppID != appID {
			next.byHost[k] = r
		}
	}
	t.p.Store(next)
	t.removeAppPreviews(appID)
	t.tell(Change{Op: OpRemoveApp, AppID: appID})
}
