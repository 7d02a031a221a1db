package database

import "fmt"

// next looks a move up in a transition table: where a thing in status from goes on cause, or
// an error wrapping ErrTransition when the table lists no such move. The database, its dumps
// and its restores each have a table of this shape, and every status change goes through one.
func next[S, C ~string](table map[S]map[C]S, from S, cause C) (S, error) {
	to, ok := table[from][cause]
	if !ok {
		return from, fmt.Errorf("%w: %s on %s", ErrTransition, from, cause)
	}
	return to, nil
}
