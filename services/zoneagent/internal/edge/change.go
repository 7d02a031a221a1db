package edge

import (
	"errors"
	"fmt"
	"time"
)

// Ops of a Change: one per way the runtime writes its table.
const (
	OpReplace   = "replace" // the whole table: the runtime's start, a follower's first view
	OpSet       = "set"
	OpUnset     = "unset" // one app's route, not its hostnames or previews
	OpRemoveApp = "remove_app"
	OpHost      = "host"      // one custom hostname's app ("": no longer routed)
	OpPause     = "pause"     // every hold, whole (with OpReplace)
	OpPauseApp  = "pause_app" // one app's hold
	OpPreviews  = "previews"  // every preview, live and removed (previewtable.go)
	OpPreview   = "preview"   // one preview's revision or tombstone
)

// Change is one write to a Table, as the runtime sends it to its edge process (the table
// feed, internal/edgelink): the edge applies it to its own copy.
type Change struct {
	Op     string               `json:"op"`
	Route  Route                `json:"route,omitzero"`   // OpSet
	AppID  string               `json:"app_id,omitempty"` // OpRemoveApp, OpUnset, OpHost, OpPauseApp
	Host   string               `json:"host,omitempty"`   // OpHost
	From   *time.Time           `json:"from,omitempty"`   // OpPauseApp: nil lifts the hold
	Routes []Route              `json:"routes,omitempty"` // OpReplace
	Hosts  map[string]string    `json:"hosts,omitempty"`  // OpReplace: hostname → app id
	Paused map[string]time.Time `json:"paused,omitempty"` // OpPause
	// Previews: OpPreviews; Preview: OpPreview.
	Previews []Preview `json:"previews,omitempty"`
	Preview  *Preview  `json:"preview,omitempty"`
}

// ErrUnknownChange is a change whose op is none of the table's.
var ErrUnknownChange = errors.New("unknown table change")

// Apply makes the change on t, as the runtime made it on its own table.
func (t *Table) Apply(c Change) error {
	switch c.Op {
	case OpReplace:
		t.Replace(c.Routes, c.Hosts)
	case OpSet:
		t.Set(c.Route)
	case OpUnset:
		t.Unset(c.AppID)
	case OpRemoveApp:
		t.RemoveApp(c.AppID)
	case OpHost:
		if c.Host == "" {
			return fmt.Errorf("%w: a host change names no host", ErrUnknownChange)
		}
		t.SetHost(c.Host, c.AppID)
	case OpPause:
		t.Pause(c.Paused)
	case OpPauseApp:
		t.PauseApp(c.AppID, c.From)
	case OpPreviews:
		t.ReplacePreviews(c.Previews)
	case OpPreview:
		if c.Preview == nil || c.Preview.ID == "" {
			return fmt.Errorf("%w: a preview change names no preview", ErrUnknownChange)
		}
		t.SetPreview(*c.Preview)
	default:
		return fmt.Errorf("%w: %q", ErrUnknownChange, c.Op)
	}
	return nil
}

// Follow makes tell hear every later change to t, and first the table as it is now (a
// replace, then the pauses), all under the writers' lock: no change is missed or heard twice,
// and they are heard in order. tell runs while writers wait: it may block (the runtime waits
// for its edge's ack) but must not write to t.
func (t *Table) Follow(tell func(Change)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.follow = tell
	t.tellAll()
}

// Resend tells the follower the whole table again, in order with the changes: when one
// change may not have reached it (edgelink.Feed.Unsure).
func (t *Table) Resend() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.follow != nil {
		t.tellAll()
	}
}

// tellAll tells the follower the table as it is; the caller holds mu.
func (t *Table) tellAll() {
	tell := t.follow
	cur := t.p.Load()
	routes := make([]Route, 0, cur.byApp.Len())
	cur.byApp.Range(func(_ string, r Route) { routes = append(routes, r) })
	hosts := make(map[string]string, cur.hostApp.Len())
	cur.hostApp.Range(func(h, app string) { hosts[h] = app })
	tell(Change{Op: OpReplace, Routes: routes, Hosts: hosts})
	paused := map[string]time.Time{}
	t.paused.Load().Range(func(app string, from time.Time) { paused[app] = from })
	tell(Change{Op: OpPause, Paused: paused})
	if t.previews.Load() != nil {
		tell(Change{Op: OpPreviews, Previews: t.previewList()})
	}
}

// tell passes a change to the follower; the caller holds mu.
func (t *Table) tell(c Change) {
	if t.follow != nil {
		t.follow(c)
	}
}
