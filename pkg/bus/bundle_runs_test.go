package bus

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rowsOf makes outbox rows with the given routing keys and body sizes, seq 1, 2, ….
func rowsOf(keys []string, sizes []int) []outboxRow {
	rows := make([]outboxRow, len(keys))
	for i, k := range keys {
		size := 10
		if sizes != nil {
			size = sizes[i]
		}
		rows[i] = outboxRow{Seq: int64(i + 1), ID: uuid.NewString(), RoutingKey: k, Type: "t", Body: make([]byte, size)}
	}
	return rows
}

func repeat(s string, n int) []string { return slices.Repeat([]string{s}, n) }

func TestRunsSplitsAtKeysAndBounds(t *testing.T) {
	const kib = 1 << 10
	tests := []struct {
		name  string
		keys  []string
		sizes []int
		want  []int // the length of each run, in order
	}{
		{"nothing", nil, nil, nil},
		{"one row", []string{"a"}, nil, []int{1}},
		{"one key", repeat("a", 5), nil, []int{5}},
		{"a key change splits, a return does not join", []string{"a", "a", "b", "a", "a"}, nil, []int{2, 1, 2}},
		{"every row another key", []string{"a", "b", "c"}, nil, []int{1, 1, 1}},
		{"at most maxBundleEvents", repeat("a", 2*maxBundleEvents+1), nil, []int{maxBundleEvents, maxBundleEvents, 1}},
		{"at most maxBundleBytes", repeat("a", 4), []int{100 * kib, 100 * kib, 100 * kib, 10}, []int{2, 2}},
		{"exactly maxBundleBytes fits", repeat("a", 3), []int{128 * kib, 128 * kib, 1}, []int{2, 1}},
		{"a big event travels alone", repeat("a", 3), []int{10, 300 * kib, 10}, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := rowsOf(tt.keys, tt.sizes)
			var got []int
			var seqs []int64
			for _, run := range runs(rows) {
				got = append(got, len(run))
				for _, r := range run {
					if r.RoutingKey != run[0].RoutingKey {
						t.Fatalf("a run mixes keys %q and %q", run[0].RoutingKey, r.RoutingKey)
					}
					seqs = append(seqs, r.Seq)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("runs of %v, want %v", got, tt.want)
			}
			for i, s := range seqs {
				if s != int64(i+1) {
					t.Fatalf("rows out of order or lost: %v", seqs)
				}
			}
		})
	}
}

// What the relay publishes for a run is what a consumer unpacks: every event's id, type,
// body and string headers, and a lone event as a plain message.
func TestPublishingRoundTrips(t *testing.T) {
	created := time.Now().Truncate(time.Microsecond)
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d events", n), func(t *testing.T) {
			rows := rowsOf(repeat("k", n), nil)
			for i := range rows {
				rows[i].Body = []byte(fmt.Sprintf("body %d", i))
				rows[i].CreatedAt = created
				rows[i].Headers = map[string]any{"traceparent": fmt.Sprintf("tp-%d", i), "dropped": 7}
			}
			msg, err := publishing(rows, "test.apps")
			if err != nil {
				t.Fatal(err)
			}
			wantType := map[int]string{1: contentTypeEvent, 3: contentTypeBundle}[n]
			if msg.ContentType != wantType || msg.MessageId != rows[0].ID || msg.UserId != "test.apps" {
				t.Fatalf("message %s, id %s, user %s", msg.ContentType, msg.MessageId, msg.UserId)
			}
			d := amqpDelivery(msg)
			events, err := eventsOf(d)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != n {
				t.Fatalf("%d events, want %d", len(events), n)
			}
			for i, ev := range events {
				r := rows[i]
				if ev.id != r.ID || ev.typ != r.Type || !bytes.Equal(ev.body, r.Body) || ev.contentType != contentTypeEvent {
					t.Errorf("event %d: %+v, want row %+v", i, ev, r)
				}
				if ev.headers["traceparent"] != fmt.Sprintf("tp-%d", i) || len(ev.headers) != 1 {
					t.Errorf("event %d headers %v", i, ev.headers)
				}
				if n > 1 && !ev.timestamp.Equal(created) {
					t.Errorf("event %d created %v, want %v", i, ev.timestamp, created)
				}
			}
		})
	}
}

// amqpDelivery is p as a consumer receives it.
func amqpDelivery(p amqp.Publishing) amqp.Delivery {
	return amqp.Delivery{ContentType: p.ContentType, MessageId: p.MessageId, UserId: p.UserId, Type: p.Type,
		Timestamp: p.Timestamp, Headers: p.Headers, Body: p.Body}
}

// A delivery that is not a bundle the relay could have made is refused whole.
func TestEventsOfRefusesWhatNoRelayMakes(t *testing.T) {
	tooMany, err := publishing(rowsOf(repeat("k", maxBundleEvents+1), nil), "test.apps")
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]amqp.Delivery{
		"unreadable": {ContentType: contentTypeBundle, Body: []byte("\x0a\xff\xff\xff")},
		"empty":      {ContentType: contentTypeBundle},
		"too many":   amqpDelivery(tooMany),
	} {
		if events, err := eventsOf(d); err == nil {
			t.Errorf("%s: %d events, want an error", name, len(events))
		}
	}
	fits, err := publishing(rowsOf(repeat("k", maxBundleEvents), nil), "test.apps")
	if err != nil {
		t.Fatal(err)
	}
	if events, err := eventsOf(amqpDelivery(fits)); err != nil || len(events) != maxBundleEvents {
		t.Fatalf("a full bundle: %d events, %v", len(events), err)
	}
}
