package revision

// State is where a revision stands on this zone.
type State string

// States: pending → preparing → ready → active → retired; or failed / discarded.
const (
	StatePending   State = "pending"   // recorded, not yet picked up
	StatePreparing State = "preparing" // unpacking, building, releasing, starting
	StateReady     State = "ready"     // healthy, waiting for the control plane's word
	StateActive    State = "active"    // serving
	StateRetired   State = "retired"   // a newer revision took over
	StateFailed    State = "failed"    // preparation failed; never serves
	StateDiscarded State = "discarded" // the control plane gave it up; never serves
)

// States lists every state, in the order of the happy path.
var States = []State{StatePending, StatePreparing, StateReady, StateActive, StateRetired, StateFailed, StateDiscarded}

// Terminal reports whether nothing more happens to a revision in s.
func (s State) Terminal() bool {
	return s == StateRetired || s == StateFailed || s == StateDiscarded
}

// Unprepared reports whether the revision still has to be prepared (again, after a restart
// interrupted a preparation).
func (s State) Unprepared() bool { return s == StatePending || s == StatePreparing }

// Unsettled reports whether the agent still has work with a revision in s: preparing it,
// activating it or discarding it. The store's Work lists exactly these.
func (s State) Unsettled() bool { return s.Unprepared() || s == StateReady }
