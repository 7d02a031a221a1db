package cron

import (
	"sort"
	"time"
)

const (
	// shiftSlack exceeds any daylight-saving shift: a firing's wall-clock time can sit at
	// most this far from the wall-clock time of the instant it follows.
	shiftSlack = 3 * time.Hour
	// horizon bounds the search for the next firing; a schedule with none in it never fires
	// (Feb 30) or fires too rarely to be useful.
	horizon = 9 * 366 * 24 * time.Hour
)

// Next is the first firing strictly after after, in loc, or the zero time when there is
// none within nine years. Daylight saving follows Vixie cron: a job with a fixed hour and
// minute fires once when its local time repeats (the first time) and at the instant the
// clock jumps when its local time does not exist; a job whose minute or hour is '*' or a
// step fires on the wall-clock minutes as they come (twice in a repeated hour, not at all
// in a skipped one).
func (s Schedule) Next(after time.Time, loc *time.Location) time.Time {
	after = after.In(loc)
	if t, ok := s.nextSteady(after, loc); ok {
		return t
	}
	var best time.Time
	s.walk(wall(after).Add(-shiftSlack), wall(after).Add(horizon), func(w time.Time) bool {
		if !best.IsZero() && w.After(wall(best).Add(shiftSlack)) {
			return false
		}
		for _, t := range s.instants(w, loc) {
			if t.After(after) && (best.IsZero() || t.Before(best)) {
				best = t
			}
		}
		return true
	})
	if best.IsZero() {
		return best
	}
	return best.UTC()
}

// nextSteady is Next when no offset change lies between after and the firing: the wall
// clock then maps one to one onto instants. ok is false when it cannot tell.
func (s Schedule) nextSteady(after time.Time, loc *time.Location) (time.Time, bool) {
	start, end := after.ZoneBounds()
	if !start.IsZero() && !start.Before(after.Add(-shiftSlack)) {
		// A change just before after: a repeated local time may have fired already.
		return time.Time{}, false
	}
	_, offset := after.Zone()
	from := wall(after).Truncate(time.Minute).Add(time.Minute)
	var found time.Time
	s.walk(from, from.Add(horizon), func(w time.Time) bool { found = w; return false })
	if found.IsZero() {
		return time.Time{}, false
	}
	t := found.Add(-time.Duration(offset) * time.Second)
	if !end.IsZero() && !t.Before(end) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// wall is t's local wall-clock reading as a UTC time, so wall-clock arithmetic ignores zones.
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// instants are the instants at which the wall-clock minute w fires in loc: none, one, or
// (a wall-clock job in a repeated hour) two.
func (s Schedule) instants(w time.Time, loc *time.Location) []time.Time {
	offsets := map[int]bool{}
	for _, d := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, o := w.Add(d).In(loc).Zone()
		offsets[o] = true
	}
	var ts []time.Time
	maxOffset := -1 << 31
	for o := range offsets {
		maxOffset = max(maxOffset, o)
		t := w.Add(-time.Duration(o) * time.Second)
		if _, got := t.In(loc).Zone(); got == o {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	switch {
	case len(ts) == 0 && s.wallClock:
		return nil // a skipped minute: the wall clock never shows it
	case len(ts) == 0:
		// The local time does not exist: fire when the clock jumps over it. Read with the
		// later offset, w falls before the jump, in the zone that the jump ends.
		_, end := w.Add(-time.Duration(maxOffset) * time.Second).In(loc).ZoneBounds()
		return []time.Time{end}
	case len(ts) > 1 && !s.wallClock:
		return ts[:1] // a repeated local time: only its first occurrence
	}
	return ts
}

// walk calls yield with each wall-clock minute in [from, until] the schedule matches, in
// order, until yield returns false.
func (s Schedule) walk(from, until time.Time, yield func(time.Time) bool) {
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	for !day.After(until) {
		if s.month&(1<<uint(day.Month())) == 0 {
			day = time.Date(day.Year(), day.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if s.dayMatches(day) {
			for h := 0; h < 24; h++ {
				if s.hour&(1<<uint(h)) == 0 {
					continue
				}
				for m := 0; m < 60; m++ {
					if s.minute&(1<<uint(m)) == 0 {
						continue
					}
					w := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
					if w.Before(from) {
						continue
					}
					if w.After(until) || !yield(w) {
						return
					}
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
}

// dayMatches applies Vixie's rule: when either day field is '*' both must match, otherwise
// either one matching is enough.
func (s Schedule) dayMatches(day time.Time) bool {
	dom := s.dom&(1<<uint(day.Day())) != 0
	dow := s.dow&(1<<uint(day.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// MinInterval is the shortest time, in UTC, between two consecutive firings over the next
// 1000 firings after from or two years, whichever ends first. A schedule firing at most once
// in that span answers the span; one that never fires answers 0.
func (s Schedule) MinInterval(from time.Time, loc *time.Location) time.Duration {
	const span = 2 * 366 * 24 * time.Hour
	t := s.Next(from, loc)
	if t.IsZero() {
		return 0
	}
	shortest := span
	for i := 0; i < 1000; i++ {
		n := s.Next(t, loc)
		if n.IsZero() || n.Sub(from) > span {
			break
		}
		shortest = min(shortest, n.Sub(t))
		t = n
	}
	return shortest
}
