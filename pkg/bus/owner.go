package bus

import (
	"context"
	"errors"
	"fmt"
)

// refusal is the reason an event is never handed to its handler: it is dead-lettered at once,
// after no attempt, and not counted as the handler's failure.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// ownerChecked refuses, before try, an event that no handler should see (see refuse).
func ownerChecked(owns func(publisher, key string) bool, try tryFunc) tryFunc {
	return func(ctx context.Context, m *message, n int) error {
		if err := refuse(owns, m); err != nil {
			return refusal{err}
		}
		return try(ctx, m, n)
	}
}

// refuse is why m must not reach a handler, or nil: it came in a bundle that cannot be read,
// it has no id to deduplicate it by, or its publisher does not own its routing key (forged,
// or sent by a service through the default exchange: nobody but the key's owner speaks for
// it).
func refuse(owns func(publisher, key string) bool, m *message) error {
	switch {
	case m.unreadable != nil:
		return m.unreadable
	case m.ev.id == "":
		return errors.New("message has no id")
	case !owns(m.publisher, m.key):
		return fmt.Errorf("publisher %q (user %q) does not own routing key %q", m.publisher, m.carrier.d.UserId, m.key)
	}
	return nil
}
