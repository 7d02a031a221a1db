package edgecount

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

// DefaultFlushInterval is ZONE_METRICS_FLUSH_INTERVAL's default.
const DefaultFlushInterval = 10 * time.Second

// maxPending bounds the reports kept while the outbox cannot be written (an hour of reports
// at the default interval); past it the oldest are dropped, logged with their count.
const maxPending = 360

// turnDelay is how long after a minute's turn its last collection runs: a request that
// ended just before the turn is in its slot by then.
const turnDelay = 20 * time.Millisecond

// Flusher writes the counter's counts to the outbox as zonev1.AppMetrics: every Interval,
// at each minute's turn, and once more at shutdown.
type Flusher struct {
	Counter  *Counter
	Zone     string
	Interval time.Duration // at most a minute (config validates it); 0: DefaultFlushInterval
	// Publish writes one report to the zone's outbox (busapi.PublishAppMetrics).
	Publish func(ctx context.Context, m *zonev1.AppMetrics) error
	// Drained, when set, is closed once the edge has answered its last request: the
	// shutdown's flush waits for it (bounded by DrainWait) so those requests are reported.
	Drained   <-chan struct{}
	DrainWait time.Duration
	Log       *slog.Logger
	Now       func() time.Time // tests; nil: time.Now

	pending []*zonev1.AppMetrics
}

func (f *Flusher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Run flushes until ctx ends, then flushes what is left.
func (f *Flusher) Run(ctx context.Context) error {
	interval := f.Interval
	if interval <= 0 || interval > time.Minute {
		interval = DefaultFlushInterval
	}
	t := time.NewTimer(f.wait(interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if f.Drained != nil {
				select {
				case <-f.Drained:
				case <-time.After(f.DrainWait):
				}
			}
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			f.Flush(fctx)
			cancel()
			return nil
		case <-t.C:
		}
		f.Flush(ctx)
		t.Reset(f.wait(interval))
	}
}

// wait is the time to the next flush: the interval, or just past the minute's turn when
// that comes first.
func (f *Flusher) wait(interval time.Duration) time.Duration {
	now := f.now()
	turn := now.Truncate(time.Minute).Add(time.Minute).Sub(now) + turnDelay
	return min(interval, turn)
}

// Flush collects the counts since the last flush and writes one report per minute that has
// any, after the reports an earlier flush could not write (each keeps its report id, so a
// retried write is still counted once by the logs service).
func (f *Flusher) Flush(ctx context.Context) {
	for _, m := range f.Counter.Collect(f.now()) {
		f.pending = append(f.pending, &zonev1.AppMetrics{ReportId: uuid.NewString(), Zone: f.Zone,
			Minute: timestamppb.New(m.Minute), Requests: m.Apps})
	}
	if over := len(f.pending) - maxPending; over > 0 {
		f.log().WarnContext(ctx, "app metrics: outbox unwritable for too long; oldest reports dropped", "reports", over)
		f.pending = f.pending[over:]
	}
	for len(f.pending) > 0 {
		if err := f.Publish(ctx, f.pending[0]); err != nil {
			f.log().WarnContext(ctx, "app metrics not written; kept for the next flush", "reports", len(f.pending), "err", err.Error())
			return
		}
		f.pending[0] = nil
		f.pending = f.pending[1:]
	}
}

func (f *Flusher) log() *slog.Logger {
	if f.Log == nil {
		return slog.Default()
	}
	return f.Log
}
