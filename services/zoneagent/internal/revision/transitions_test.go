package revision

import (
	"errors"
	"testing"
)

// TestEveryTransition checks the whole matrix: exactly the listed moves are allowed, a
// terminal state refuses everything with ErrTerminal, and a refused move leaves the revision
// as it was.
func TestEveryTransition(t *testing.T) {
	want := map[[2]State]bool{
		{StatePending, StatePreparing}: true, {StatePending, StateDiscarded}: true,
		{StatePreparing, StatePreparing}: true, {StatePreparing, StateReady}: true,
		{StatePreparing, StateFailed}: true, {StatePreparing, StateDiscarded}: true,
		{StateReady, StateActive}: true, {StateReady, StateDiscarded}: true,
		{StateActive, StateRetired}: true,
	}
	for _, from := range States {
		for _, to := range States {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				r := Revision{DeployID: "d", State: from}
				err := r.MoveTo(to)
				if CanTransition(from, to) != want[[2]State{from, to}] {
					t.Fatalf("CanTransition = %v, want %v", !want[[2]State{from, to}], want[[2]State{from, to}])
				}
				if want[[2]State{from, to}] {
					if err != nil || r.State != to {
						t.Fatalf("refused an allowed move: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatal("allowed a move the state machine does not list")
				}
				if !errors.Is(err, ErrTransition) {
					t.Fatalf("got %v, want ErrTransition", err)
				}
				if from.Terminal() != errors.Is(err, ErrTerminal) {
					t.Fatalf("from %s (terminal %v) refused with %v", from, from.Terminal(), err)
				}
				if r.State != from {
					t.Fatalf("state changed to %s on a refused move", r.State)
				}
			})
		}
	}
}

// TestTerminalStatesHaveNoMoves keeps the table and Terminal in step.
func TestTerminalStatesHaveNoMoves(t *testing.T) {
	for _, s := range States {
		if s.Terminal() != (len(allowed[s]) == 0) {
			t.Errorf("%s: terminal %v but %d moves listed", s, s.Terminal(), len(allowed[s]))
		}
	}
}

func TestWorkStates(t *testing.T) {
	for _, s := range States {
		unsettled := s == StatePending || s == StatePreparing || s == StateReady
		if s.Unsettled() != unsettled {
			t.Errorf("%s: Unsettled = %v", s, s.Unsettled())
		}
		if s.Unprepared() != (s == StatePending || s == StatePreparing) {
			t.Errorf("%s: Unprepared = %v", s, s.Unprepared())
		}
	}
}
