package bus

import (
	"log/slog"
	"slices"
	"sync"
)

// acker acknowledges one channel's deliveries with as few frames as it can. The broker spends
// about as much on an ack as on a publish, so one ack with multiple=true for a whole run of
// handled deliveries halves its cost of consuming under load.
//
// A multiple ack settles every unacknowledged delivery up to its tag, so it may only cover
// deliveries that are done: deliveries are tracked in the order they arrived (the order of
// their tags), and only the oldest run of finished ones is acknowledged at once. A delivery
// still being handled holds back the acks of those after it until it finishes; one that waits
// to be retried would hold them back for seconds and keep the prefetch window full, so while
// any is waiting, finished deliveries are acknowledged one by one instead.
//
// A delivery settled some other way (dead-lettered, returned to its queue) is settled through
// settle, under the acker's lock, so that the broker has seen its own ack or nack before a
// multiple ack could reach past it.
type acker struct {
	ch  acknowledger
	log *slog.Logger

	mu      sync.Mutex
	pending []ackEntry // oldest first, by tag; not yet known settled at the broker
	waiting int        // entries in state ackWaiting
}

// acknowledger is the part of an amqp.Channel the acker uses.
type acknowledger interface {
	Ack(tag uint64, multiple bool) error
}

type ackState uint8

const (
	ackHandling ackState = iota // being handled
	ackWaiting                  // waiting for a retry: must not hold the others back
	ackDone                     // handled, its ack not yet sent
	ackSettled                  // acked or nacked on its own
)

type ackEntry struct {
	tag   uint64
	state ackState
}

func newAcker(ch acknowledger, log *slog.Logger) *acker { return &acker{ch: ch, log: log} }

// track notes a delivery as it arrives; called in arrival order.
func (a *acker) track(tag uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending = append(a.pending, ackEntry{tag: tag})
}

// ack acknowledges handled deliveries, now or with a later multiple ack.
func (a *acker) ack(tags ...uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range tags {
		a.set(t, ackDone)
	}
	a.flush()
}

// wait marks a delivery as waiting for a retry (true) or handled again (false).
func (a *acker) wait(tag uint64, waiting bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if waiting {
		a.set(tag, ackWaiting)
	} else {
		a.set(tag, ackHandling)
	}
	a.flush()
}

// settle runs send, which acks or nacks the delivery on its own, and forgets the delivery.
func (a *acker) settle(tag uint64, send func() error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := send()
	// Settled or not, the broker has its fate now: the ack went, or the channel is gone and
	// the delivery returns to the queue with it.
	a.set(tag, ackSettled)
	a.flush()
	return err
}

func (a *acker) set(tag uint64, s ackState) {
	i, ok := slices.BinarySearchFunc(a.pending, tag, func(e ackEntry, t uint64) int {
		switch {
		case e.tag < t:
			return -1
		case e.tag > t:
			return 1
		}
		return 0
	})
	if !ok {
		return
	}
	e := &a.pending[i]
	if e.state == ackWaiting {
		a.waiting--
	}
	if s == ackWaiting {
		a.waiting++
	}
	e.state = s
}

// flush sends what can be sent: one multiple ack for the oldest run of finished deliveries,
// and, while a delivery waits for a retry, a single ack for each finished one behind it.
func (a *acker) flush() {
	var last uint64
	n := 0
	for n < len(a.pending) && a.pending[n].state >= ackDone {
		if a.pending[n].state == ackDone {
			last = a.pending[n].tag
		}
		n++
	}
	if n > 0 {
		a.pending = slices.Delete(a.pending, 0, n)
	}
	if last != 0 {
		a.send(last, true)
	}
	if a.waiting == 0 {
		return
	}
	for i := range a.pending {
		if a.pending[i].state == ackDone {
			a.send(a.pending[i].tag, false)
			a.pending[i].state = ackSettled
		}
	}
}

func (a *acker) send(tag uint64, multiple bool) {
	if err := a.ch.Ack(tag, multiple); err != nil {
		// The channel is gone; the broker redelivers and processed_messages absorbs it.
		a.log.Debug("bus ack failed", "err", err, "delivery_tag", tag, "multiple", multiple)
	}
}
