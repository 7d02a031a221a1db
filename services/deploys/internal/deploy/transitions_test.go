package deploy

import (
	"errors"
	"testing"
	"time"
)

var allStatuses = []Status{Building, Releasing, Live, Failed, Cancelled, Superseded}

// TestEveryTransition checks the whole matrix: exactly the listed moves are allowed, and a
// terminal state refuses everything with ErrTerminal.
func TestEveryTransition(t *testing.T) {
	want := map[[2]Status]bool{
		{Building, Releasing}: true, {Building, Failed}: true, {Building, Cancelled}: true,
		{Releasing, Live}: true, {Releasing, Failed}: true, {Releasing, Cancelled}: true,
		{Live, Superseded}: true,
	}
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				d := &Deploy{ID: "a", Status: from, CreatedAt: now}
				err := d.transition(to, now)
				if want[[2]Status{from, to}] {
					if err != nil || d.Status != to {
						t.Fatalf("refused an allowed move: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatal("allowed a move the state machine forbids")
				}
				if d.Status != from {
					t.Fatalf("status changed to %s on a refused move", d.Status)
				}
				if from.Terminal() && !errors.Is(err, ErrTerminal) {
					t.Fatalf("terminal %s refused with %v, want ErrTerminal", from, err)
				}
				if !from.Terminal() && !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("got %v, want ErrInvalidTransition", err)
				}
			})
		}
	}
}

func TestTransitionsStampTimes(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	d := &Deploy{ID: "a", Status: Building, CreatedAt: t0}
	if err := d.StartRelease(t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if d.FinishedAt != nil || d.LiveAt != nil {
		t.Fatal("releasing is not finished")
	}
	if err := d.GoLive(t0.Add(2*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if d.LiveAt == nil || d.FinishedAt == nil || !d.Rollbackable() {
		t.Fatal("live must stamp liveAt and finishedAt and be rollbackable")
	}
	if err := d.Supersede(t0.Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if !d.FinishedAt.Equal(t0.Add(2*time.Second)) || !d.Rollbackable() {
		t.Fatal("superseding keeps the first finish time and the rollback right")
	}
}

func TestCancelOnlyOpen(t *testing.T) {
	now := time.Now()
	for _, s := range allStatuses {
		d := &Deploy{Status: s}
		err := d.Cancel(now)
		if s.Open() != (err == nil) {
			t.Errorf("cancel from %s: %v", s, err)
		}
		if !s.Open() && !errors.Is(err, ErrNotCancellable) {
			t.Errorf("cancel from %s: %v, want ErrNotCancellable", s, err)
		}
	}
}

func TestFailRecordsCode(t *testing.T) {
	d := &Deploy{Status: Releasing}
	if err := d.Fail(time.Now(), "release_failed"); err != nil || d.Error != "release_failed" {
		t.Fatalf("%v %q", err, d.Error)
	}
	if err := d.Fail(time.Now(), "again"); !errors.Is(err, ErrTerminal) || d.Error != "release_failed" {
		t.Fatalf("failing a failed deploy: %v %q", err, d.Error)
	}
}

// An older deploy never goes live over a newer live one.
func TestOlderNeverReplacesNewer(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	older := &Deploy{ID: "0001", Status: Releasing, CreatedAt: t0}
	newer := &Deploy{ID: "0002", Status: Live, CreatedAt: t0.Add(time.Second)}
	if err := older.GoLive(t0.Add(time.Minute), newer); !errors.Is(err, ErrNewerLive) {
		t.Fatalf("got %v, want ErrNewerLive", err)
	}
	if older.Status != Releasing {
		t.Fatal("refusal must not change the status")
	}
	// Same instant: the id (UUIDv7) decides.
	sameTime := &Deploy{ID: "0003", Status: Live, CreatedAt: t0}
	if err := older.GoLive(t0, sameTime); !errors.Is(err, ErrNewerLive) {
		t.Fatalf("tie broken wrongly: %v", err)
	}
	later := &Deploy{ID: "0004", Status: Releasing, CreatedAt: t0.Add(time.Hour)}
	if err := later.GoLive(t0.Add(2*time.Hour), newer); err != nil {
		t.Fatal(err)
	}
}

// The 20-minute deadline, crossed with an injected time rather than by waiting.
func TestExpireAtDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status Status
		at     time.Duration
		want   bool
	}{
		{Building, Deadline - time.Millisecond, false},
		{Building, Deadline, true},
		{Releasing, Deadline + time.Hour, true},
		{Live, Deadline + time.Hour, false},
		{Cancelled, Deadline + time.Hour, false},
	} {
		d := &Deploy{Status: tc.status, CreatedAt: t0}
		if got := d.Expire(t0.Add(tc.at)); got != tc.want {
			t.Errorf("%s at +%v: expired=%v, want %v", tc.status, tc.at, got, tc.want)
		}
		if tc.want && (d.Status != Failed || d.Error != ErrCodeDeadline) {
			t.Errorf("%s: status %s error %q", tc.status, d.Status, d.Error)
		}
	}
}

// Ready is not live: activation is asked once, from releasing only, never over a newer live
// deploy, and an activating deploy is no longer the customer's to cancel.
func TestRequestActivation(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	older := &Deploy{ID: "0001", Status: Live, CreatedAt: t0}
	newer := &Deploy{ID: "0009", Status: Live, CreatedAt: t0.Add(time.Hour)}
	asked := t0.Add(time.Minute)
	for _, tc := range []struct {
		name      string
		d         Deploy
		current   *Deploy
		wantAsked bool
		wantErr   error
	}{
		{"first deploy", Deploy{ID: "0005", Status: Releasing, CreatedAt: t0.Add(time.Minute)}, nil, true, nil},
		{"over an older live", Deploy{ID: "0005", Status: Releasing, CreatedAt: t0.Add(time.Minute)}, older, true, nil},
		{"asked already", Deploy{ID: "0005", Status: Releasing, CreatedAt: t0.Add(time.Minute), ActivatingAt: &asked}, older, false, nil},
		{"under a newer live", Deploy{ID: "0005", Status: Releasing, CreatedAt: t0.Add(time.Minute)}, newer, false, ErrNewerLive},
		{"still building", Deploy{ID: "0005", Status: Building, CreatedAt: t0.Add(time.Minute)}, nil, false, ErrInvalidTransition},
		{"cancelled", Deploy{ID: "0005", Status: Cancelled, CreatedAt: t0.Add(time.Minute)}, nil, false, ErrInvalidTransition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			got, err := d.RequestActivation(t0.Add(2*time.Minute), tc.current)
			if got != tc.wantAsked || !errors.Is(err, tc.wantErr) {
				t.Fatalf("RequestActivation = %v, %v; want %v, %v", got, err, tc.wantAsked, tc.wantErr)
			}
			if d.Status != tc.d.Status {
				t.Fatalf("status moved to %s", d.Status)
			}
			if got && d.ActivatingAt == nil {
				t.Fatal("activation not recorded")
			}
		})
	}
	activating := &Deploy{Status: Releasing, ActivatingAt: &asked}
	if err := activating.CancelByCustomer(t0); !errors.Is(err, ErrNotCancellable) {
		t.Fatalf("cancel while activating: %v", err)
	}
	if err := activating.Cancel(t0); err != nil || activating.Status != Cancelled {
		t.Fatalf("the app's delete still closes it: %v %s", err, activating.Status)
	}
	if err := (&Deploy{Status: Releasing}).CancelByCustomer(t0); err != nil {
		t.Fatalf("cancel while releasing: %v", err)
	}
}

// Only an open preview revision may be served as a preview; then it is neither open nor
// terminal, and no transition leaves it.
func TestServePreview(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	d := &Deploy{Status: Building}
	if err := d.ServePreview(now); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("a deploy served as a preview: %v", err)
	}
	d.PreviewID = "abc123"
	if err := d.ServePreview(now); err != nil || d.Status != Previewing || d.FinishedAt == nil {
		t.Fatalf("serve: %v %+v", err, d)
	}
	if d.Status.Open() || d.Status.Terminal() || d.Running() || d.Rollbackable() {
		t.Fatal("previewing counted as open, terminal, running or rollbackable")
	}
	if err := d.Fail(now, "x"); err == nil {
		t.Fatal("a served preview revision failed")
	}
	if err := d.ServePreview(now); err == nil {
		t.Fatal("served twice")
	}
}
