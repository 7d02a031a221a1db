package bus

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"
)

// fakeChannel records the acks the acker sends, as the broker would see them.
type fakeChannel struct{ sent []string }

func (f *fakeChannel) Ack(tag uint64, multiple bool) error {
	f.sent = append(f.sent, fmt.Sprintf("%d/%v", tag, multiple))
	return nil
}

func (f *fakeChannel) take() []string {
	s := f.sent
	f.sent = nil
	return s
}

func newTestAcker(tags ...uint64) (*acker, *fakeChannel) {
	f := &fakeChannel{}
	a := newAcker(f, slog.New(slog.DiscardHandler))
	for _, t := range tags {
		a.track(t)
	}
	return a, f
}

func expectAcks(t *testing.T, f *fakeChannel, want ...string) {
	t.Helper()
	if got := f.take(); !slices.Equal(got, want) {
		t.Fatalf("acks sent %v, want %v", got, want)
	}
}

// A multiple ack never reaches past a delivery still being handled: finished ones behind it
// wait, and go in one ack once it is done.
func TestAckerAcksOnlyTheFinishedRun(t *testing.T) {
	a, f := newTestAcker(1, 2, 3, 4, 5)
	a.ack(2, 3)
	expectAcks(t, f)
	a.ack(1)
	expectAcks(t, f, "3/true")
	a.ack(5)
	expectAcks(t, f)
	a.ack(4)
	expectAcks(t, f, "5/true")
}

// A delivery settled on its own (dead-lettered, returned) is not the tag of a multiple ack,
// which the broker would refuse as unknown, but a run may pass over it.
func TestAckerPassesOverSettledDeliveries(t *testing.T) {
	a, f := newTestAcker(1, 2, 3)
	if err := a.settle(3, func() error { return f.Ack(3, false) }); err != nil {
		t.Fatal(err)
	}
	expectAcks(t, f, "3/false")
	a.ack(1)
	expectAcks(t, f, "1/true")
	if err := a.settle(2, func() error { return f.Ack(2, false) }); err != nil {
		t.Fatal(err)
	}
	expectAcks(t, f, "2/false")
	a.track(4)
	a.ack(4)
	expectAcks(t, f, "4/true")
}

// While a delivery waits for a retry, the ones finished behind it are acknowledged one by one,
// so the prefetch window does not fill with deliveries already done.
func TestAckerDoesNotWaitForARetry(t *testing.T) {
	a, f := newTestAcker(1, 2, 3, 4)
	a.wait(1, true)
	a.ack(3)
	expectAcks(t, f, "3/false")
	a.ack(2)
	expectAcks(t, f, "2/false")
	a.wait(1, false) // tried again
	a.ack(4)
	expectAcks(t, f)
	a.ack(1)
	expectAcks(t, f, "4/true") // 1 and 4 at once; 2 and 3 were settled already
}
