package revision

import "fmt"

// allowed is every move the agent may make; anything else is refused. A revision reaches
// active only through ready, so nothing serves before it was healthy and the control plane
// said so.
var allowed = map[State][]State{
	StatePending: {StatePreparing, StateDiscarded},
	// preparing → preparing: a preparation a restart interrupted is done again from the start.
	StatePreparing: {StatePreparing, StateReady, StateFailed, StateDiscarded},
	StateReady:     {StateActive, StateDiscarded},
	StateActive:    {StateRetired},
}

// CanTransition reports whether from → to is a permitted move.
func CanTransition(from, to State) bool {
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Transition explains why from → to is refused, or returns nil when it is allowed. A
// terminal state refuses every move with ErrTerminal, any other unlisted move with
// ErrTransition.
func Transition(from, to State) error {
	if from.Terminal() {
		return fmt.Errorf("%w: %s is final", ErrTerminal, from)
	}
	if !CanTransition(from, to) {
		return fmt.Errorf("%w: %s → %s", ErrTransition, from, to)
	}
	return nil
}
