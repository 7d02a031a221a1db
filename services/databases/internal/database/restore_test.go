package database

import (
	"errors"
	"testing"
)

// TestEveryRestoreTransition checks the whole matrix of restore status × cause: exactly the
// listed moves happen, and every other one is refused with ErrTransition and changes nothing.
func TestEveryRestoreTransition(t *testing.T) {
	type move struct {
		from  RestoreStatus
		cause RestoreCause
	}
	want := map[move]RestoreStatus{
		{RestoreRestoring, Restored}:           RestoreReady,
		{RestoreRestoring, NotRestored}:        RestoreFailed,
		{RestoreRestoring, RestoreDeleteAsked}: RestoreDeleting,
		{RestoreReady, RestoreDeleteAsked}:     RestoreDeleting,
		{RestoreFailed, RestoreDeleteAsked}:    RestoreDeleting,
	}
	for _, from := range []RestoreStatus{RestoreRestoring, RestoreReady, RestoreFailed, RestoreDeleting} {
		for _, cause := range []RestoreCause{Restored, NotRestored, RestoreDeleteAsked} {
			t.Run(string(from)+"/"+string(cause), func(t *testing.T) {
				r := Restore{ID: "r", Status: from, Message: "before"}
				err := r.Apply(cause, "report")
				to, allowed := want[move{from, cause}]
				if !allowed {
					if !errors.Is(err, ErrTransition) {
						t.Fatalf("got %v, want ErrTransition", err)
					}
					if r.Status != from || r.Message != "before" {
						t.Fatalf("a refused move changed the restore: %+v", r)
					}
					return
				}
				if err != nil || r.Status != to {
					t.Fatalf("got %v, %s; want %s", err, r.Status, to)
				}
			})
		}
	}
}

// The message says why a restore failed; no other move touches it.
func TestRestoreApplySetsTheMessageOnFailure(t *testing.T) {
	for _, tc := range []struct {
		from  RestoreStatus
		cause RestoreCause
		want  string
	}{
		{RestoreRestoring, NotRestored, "report"},
		{RestoreRestoring, Restored, "before"},
		{RestoreFailed, RestoreDeleteAsked, "before"},
	} {
		r := Restore{Status: tc.from, Message: "before"}
		if err := r.Apply(tc.cause, "report"); err != nil || r.Message != tc.want {
			t.Errorf("%s on %s: %v, message %q; want %q", tc.from, tc.cause, err, r.Message, tc.want)
		}
	}
}
