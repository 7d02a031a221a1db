package bus

import (
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

// A bundle is several outbox events with one routing key sent as one AMQP message (see
// busv1.Bundle). RabbitMQ's cost is per message, not per byte: a persistent publish with its
// confirm, a delivery and its share of an ack cost it about 50 µs of CPU whatever the size,
// which alone would spend a quarter of what two cores have for each event at 10,000 events/s.
// So the relay sends each run of consecutive claimed rows with the same routing key as one
// message, and consumers and listeners unpack it; every event in it keeps its own id,
// attempts and dead letter, exactly as if it had come alone. A run of one is sent alone, as
// before bundles existed.
//
// A consumer built before bundles would take a bundle for a malformed event and dead-letter
// it whole; replaying those dead letters once consumers are upgraded delivers them.
const (
	contentTypeEvent  = "application/x-protobuf"
	contentTypeBundle = "application/vnd.tori.bundle+x-protobuf"
	typeBundle        = "tori.bus.v1.Bundle"
)

// Bounds on one bundle. A hundred events is what a consumer handles in one transaction
// (maxBatch); the bytes keep a bundle of large events (log batches) a modest message for the
// broker, and an event bigger than that travels alone.
const (
	maxBundleEvents = 100
	maxBundleBytes  = 256 << 10
)

// runs splits claimed rows, in their order, into runs of consecutive rows with the same
// routing key, each within the bundle bounds. Publishing the runs in order keeps every
// queue's order of events the order of the outbox.
func runs(rows []outboxRow) [][]outboxRow {
	var out [][]outboxRow
	start, size := 0, 0
	for i, r := range rows {
		if i > start && (r.RoutingKey != rows[start].RoutingKey || i-start == maxBundleEvents || size+len(r.Body) > maxBundleBytes) {
			out = append(out, rows[start:i])
			start, size = i, 0
		}
		size += len(r.Body)
	}
	if len(rows) > start {
		out = append(out, rows[start:])
	}
	return out
}

// publishing is the AMQP message that carries run: the event itself when it is alone, a
// bundle otherwise. user is the broker user the relay connects as.
func publishing(run []outboxRow, user string) (amqp.Publishing, error) {
	first := run[0]
	msg := amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		MessageId:    first.ID,
		UserId:       user,
		Timestamp:    first.CreatedAt,
	}
	if len(run) == 1 {
		msg.ContentType = contentTypeEvent
		msg.Type = first.Type
		msg.Headers = stringHeaders(first.Headers)
		msg.Body = first.Body
		return msg, nil
	}
	b := &busv1.Bundle{Events: make([]*busv1.BundledEvent, len(run))}
	for i, r := range run {
		ev := &busv1.BundledEvent{Id: r.ID, Type: r.Type, Body: r.Body, CreatedUnixNanos: r.CreatedAt.UnixNano()}
		if len(r.Headers) > 0 {
			ev.Headers = make(map[string]string, len(r.Headers))
			for k, v := range r.Headers {
				if sv, ok := v.(string); ok {
					ev.Headers[k] = sv
				}
			}
		}
		b.Events[i] = ev
	}
	body, err := proto.Marshal(b)
	if err != nil {
		return amqp.Publishing{}, fmt.Errorf("bus: relay: encode bundle: %w", err)
	}
	msg.ContentType = contentTypeBundle
	msg.Type = typeBundle
	msg.Body = body
	return msg, nil
}

// stringHeaders is an outbox row's headers as AMQP headers. Publish writes only strings;
// anything else (a hand-written row) is dropped rather than allowed to stall the outbox.
func stringHeaders(in map[string]any) amqp.Table {
	out := make(amqp.Table, len(in))
	for k, v := range in {
		if sv, ok := v.(string); ok {
			out[k] = sv
		}
	}
	return out
}

// event is one event as consumers handle it: a message of its own, or one of a bundle's.
type event struct {
	id          string
	typ         string
	contentType string
	body        []byte
	headers     amqp.Table
	timestamp   time.Time
}

// eventsOf unpacks a delivery into its events. An error means a bundle that cannot be read;
// its events cannot be told apart, so it is dead-lettered whole.
func eventsOf(d amqp.Delivery) ([]event, error) {
	if d.ContentType != contentTypeBundle {
		return []event{wholeDelivery(d)}, nil
	}
	var b busv1.Bundle
	if err := proto.Unmarshal(d.Body, &b); err != nil {
		return nil, fmt.Errorf("bus: unreadable bundle: %w", err)
	}
	if len(b.Events) == 0 {
		return nil, fmt.Errorf("bus: empty bundle")
	}
	// No relay makes a bigger one; a publisher that does would have a consumer take them all
	// in one transaction.
	if len(b.Events) > maxBundleEvents {
		return nil, fmt.Errorf("bus: bundle of %d events, more than %d", len(b.Events), maxBundleEvents)
	}
	out := make([]event, len(b.Events))
	for i, e := range b.Events {
		var headers amqp.Table
		if len(e.Headers) > 0 {
			headers = make(amqp.Table, len(e.Headers))
			for k, v := range e.Headers {
				headers[k] = v
			}
		}
		out[i] = event{id: e.Id, typ: e.Type, contentType: contentTypeEvent, body: e.Body, headers: headers, timestamp: time.Unix(0, e.CreatedUnixNanos)}
	}
	return out, nil
}

// wholeDelivery is a delivery taken as one event: a message of its own, or a bundle that
// cannot be read, to be dead-lettered exactly as it came.
func wholeDelivery(d amqp.Delivery) event {
	return event{id: d.MessageId, typ: d.Type, contentType: d.ContentType, body: d.Body, headers: d.Headers, timestamp: d.Timestamp}
}
