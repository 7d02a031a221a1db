package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Who sent a message is the AMQP user_id the publisher set: every Conn sets its own broker
// user on everything it publishes, and the broker refuses a user_id other than the
// connection's (unless that user has the impersonator tag, which only the operator's replay
// user has). Any user may publish to any queue through the default exchange and any user
// may bind a queue to any routing key, so nothing else about a message proves its origin.

// hdrPublisher keeps a dead letter's original user_id: dead-lettering republishes it as the
// consumer, and a replay restores the original so the consumer can judge it again.
const hdrPublisher = "x-tori-publisher"

// userOf is the broker user a URL connects as.
func userOf(url string) (string, error) {
	uri, err := amqp.ParseURI(url)
	if err != nil {
		return "", fmt.Errorf("bus: broker URL: %w", err)
	}
	return uri.Username, nil
}

// publisherOf is the principal behind a message's user_id, or "" when it names none.
func publisherOf(userID string) string {
	p, ok := PrincipalOf(userID)
	if !ok {
		return ""
	}
	return p
}

// owns reports whether a message from publisher may carry key. A Conn configured with
// AcceptAnyPublisher (a test standing in for several services on one connection) takes
// everything.
func (c *Conn) owns(publisher, key string) bool {
	return c.cfg.AcceptAnyPublisher || MayPublish(publisher, key)
}

// mayAsk reports whether a request from publisher is answered at all: only the control
// plane's principals ask anything. A responder narrows this further (OnlyFrom).
func (c *Conn) mayAsk(publisher string) bool {
	return c.cfg.AcceptAnyPublisher || publisher != ""
}

// CodeForbidden is the refusal of a request its publisher may not make.
const CodeForbidden = "forbidden"

// OnlyFrom answers only requests whose publisher allow accepts; others are refused with
// CodeForbidden before handle sees them.
func OnlyFrom(allow func(publisher string) bool, handle Responder) Responder {
	return func(ctx context.Context, d Delivery) (proto.Message, error) {
		if !allow(d.Publisher) {
			return nil, Reject(CodeForbidden, "this principal may not ask that")
		}
		return handle(ctx, d)
	}
}

// IsZone accepts any zone's agent.
func IsZone(publisher string) bool {
	_, ok := ZoneOf(publisher)
	return ok
}

// Is accepts exactly the principals named.
func Is(principals ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(principals, p) }
}

// checkIDs makes sure every identifier a message carries is a UUID before anything uses it
// in a path or a query: every string field named *_id (in nested messages and lists too),
// except the keyring's key ids (*key_id), is empty or a UUID.
func checkIDs(m protoreflect.Message) error {
	var bad error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && bad == nil; i++ {
				bad = checkIDs(l.Get(i).Message())
			}
		case fd.IsMap():
			// A map's entries are messages to protoreflect, but only a map of messages has
			// messages for values (map<string, string> metadata has strings).
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					bad = checkIDs(mv.Message())
					return bad == nil
				})
			}
		case fd.Kind() == protoreflect.MessageKind:
			bad = checkIDs(v.Message())
		case fd.Kind() == protoreflect.StringKind && isIDField(fd.Name()):
			if fd.IsList() {
				l := v.List()
				for i := 0; i < l.Len() && bad == nil; i++ {
					bad = checkID(fd.Name(), l.Get(i).String())
				}
			} else {
				bad = checkID(fd.Name(), v.String())
			}
		}
		return bad == nil
	})
	return bad
}

func isIDField(name protoreflect.Name) bool {
	n := string(name)
	return (strings.HasSuffix(n, "_id") || strings.HasSuffix(n, "_ids")) &&
		!strings.HasSuffix(n, "key_id") && !strings.HasSuffix(n, "key_ids") &&
		!notUUIDFields[n]
}

// notUUIDFields are ids of another shape, which their consumers check themselves: a
// preview's id is 6 base-36 characters (contract/names.ValidPreviewID).
var notUUIDFields = map[string]bool{"preview_id": true}

// ErrInvalidID is what Decode returns (wrapped, naming the field) for an id that is not a
// UUID.
var ErrInvalidID = errors.New("is not a UUID")

func checkID(name protoreflect.Name, s string) error {
	if s == "" {
		return nil
	}
	// uuid.Parse also takes braces, "urn:uuid:" and 32 bare hex digits; an id is only ever
	// the canonical 36-character form.
	if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
		return fmt.Errorf("bus: %s %w", name, ErrInvalidID)
	}
	return nil
}
