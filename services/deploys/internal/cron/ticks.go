package cron

import (
	"fmt"
	"time"
)

const (
	// MaxLateness: the latest due tick still runs when it is less late than this; older
	// ticks are skipped as missed.
	MaxLateness = 5 * time.Minute
	// KeptTicks bounds the ticks one pass writes for a job (as many as a job keeps runs):
	// a job whose ticks went unfired for long leaves its newest ones, and the oldest of
	// those says that earlier ones were missed too.
	KeptTicks = 200
	// lookback bounds how far back a pass enumerates ticks, so a job nothing fired for a
	// year costs no more than one idle for a week.
	lookback = 8 * 24 * time.Hour
)

// Due is what a pass finds for one job.
type Due struct {
	Ticks []time.Time // oldest first, at most KeptTicks
	// Dropped says ticks older than Ticks[0], from Since on, fell due and get no row of
	// their own; the oldest row's message says so.
	Dropped bool
	Since   time.Time
	Next    time.Time // the first firing after now; zero when the schedule fires no more
}

// DueTicks enumerates the firings from nextRunAt (itself a firing) through now.
func (s Schedule) DueTicks(nextRunAt, now time.Time, loc *time.Location) Due {
	d := Due{Since: nextRunAt}
	t := nextRunAt
	if now.Sub(nextRunAt) > lookback {
		d.Dropped = true
		t = s.Next(now.Add(-lookback), loc)
	}
	for !t.IsZero() && !t.After(now) {
		if len(d.Ticks) == KeptTicks {
			d.Ticks = d.Ticks[1:]
			d.Dropped = true
		}
		d.Ticks = append(d.Ticks, t)
		t = s.Next(t, loc)
	}
	d.Next = t
	return d
}

// Decision is what one due tick becomes: skipped for Skip, or (Skip empty) a run to start,
// which the job's concurrency policy may still turn into an overlap.
type Decision struct {
	ScheduledFor time.Time
	Skip         SkipReason
	Message      string
}

// Decide turns due ticks into decisions: a disabled job skips every tick as disabled;
// otherwise every tick but the latest is missed, the latest is missed too when it is
// MaxLateness late or more, and under a billing hold it is skipped for the hold.
func Decide(d Due, now time.Time, enabled, hold bool) []Decision {
	out := make([]Decision, len(d.Ticks))
	for i, t := range d.Ticks {
		out[i].ScheduledFor = t
		latest := i == len(d.Ticks)-1
		switch {
		case !enabled:
			out[i].Skip = SkipDisabled
		case !latest || now.Sub(t) >= MaxLateness:
			out[i].Skip = SkipMissed
		case hold:
			out[i].Skip = SkipHold
		}
	}
	if d.Dropped && len(out) > 0 {
		out[0].Message = fmt.Sprintf("earlier ticks since %s were skipped too and are not listed", d.Since.UTC().Format(time.RFC3339))
	}
	return out
}

// MaxOverlapping bounds the runs of one job an `allow` policy keeps pending or running at
// once: an every-minute job with a long timeout would otherwise start a sandbox a minute
// until the zone's share of the app (its processes, its memory) ran out for its instances.
const MaxOverlapping = 10

// Admit applies the concurrency policy to a run about to start while inProgress runs of the
// job are pending or running: skip it (forbid, or allow at MaxOverlapping), cancel those
// first (replace), or just start.
func (p Policy) Admit(inProgress int) (start, cancelOthers bool) {
	if inProgress == 0 {
		return true, false
	}
	switch p {
	case Replace:
		return true, true
	case Allow:
		return inProgress < MaxOverlapping, false
	}
	return false, false
}
