// Package cron is the cron jobs' domain: schedules (Vixie cron's five fields and macros),
// when they fire in a time zone (with Vixie's daylight-saving rules), and what becomes of
// each due tick. It does no I/O.
package cron

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidSchedule is a schedule that does not parse or never fires.
var ErrInvalidSchedule = errors.New("cron: invalid schedule")

// Schedule is a parsed schedule: one bit per allowed value of each field.
type Schedule struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar say the field began with '*': Vixie cron then requires both day
	// fields to match; when both are restricted either one matching is enough.
	domStar, dowStar bool
	// wallClock says the minute or hour field is '*' or a step: such a job follows the wall
	// clock through daylight-saving changes (twice in a repeated hour, never in a skipped
	// one), where a job with a fixed hour and minute fires once (Vixie's rule).
	wallClock bool
}

// macros are the shorthand schedules Vixie cron accepts (@reboot has no meaning here).
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

type field struct {
	name     string
	min, max int
	names    []string // names[i] is the value min+i
}

var (
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day of month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	// Day of week allows 7 for Sunday, as Vixie cron does; it is folded onto 0.
	dowField = field{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"}}
)

// Parse reads a schedule: five fields (minute hour day-of-month month day-of-week) with
// '*', lists, ranges, steps and month/day names, or one of the @ macros.
func Parse(spec string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "@") {
		m, ok := macros[strings.ToLower(spec)]
		if !ok {
			return Schedule{}, fmt.Errorf("%w: unknown macro %q (use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually)", ErrInvalidSchedule, spec)
		}
		spec = m
	}
	parts := strings.Fields(spec)
	if len(parts) != 5 {
		return Schedule{}, fmt.Errorf("%w: want 5 fields (minute hour day-of-month month day-of-week), got %d", ErrInvalidSchedule, len(parts))
	}
	var s Schedule
	var err error
	fields := []struct {
		f    field
		bits *uint64
	}{{minuteField, &s.minute}, {hourField, &s.hour}, {domField, &s.dom}, {monthField, &s.month}, {dowField, &s.dow}}
	for i, f := range fields {
		if *f.bits, err = f.f.parse(parts[i]); err != nil {
			return Schedule{}, err
		}
	}
	if s.dow&(1<<7) != 0 {
		s.dow = s.dow&^(1<<7) | 1
	}
	s.domStar = strings.HasPrefix(parts[2], "*")
	s.dowStar = strings.HasPrefix(parts[4], "*")
	s.wallClock = followsWallClock(parts[0]) || followsWallClock(parts[1])
	return s, nil
}

// followsWallClock says a minute or hour field is '*' or a step.
func followsWallClock(f string) bool { return strings.HasPrefix(f, "*") || strings.Contains(f, "/") }

func (f field) parse(text string) (uint64, error) {
	var bits uint64
	for _, item := range strings.Split(text, ",") {
		b, err := f.parseItem(item)
		if err != nil {
			return 0, err
		}
		bits |= b
	}
	return bits, nil
}

func (f field) parseItem(item string) (uint64, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s field %q: %s", ErrInvalidSchedule, f.name, item, why)
	}
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 || n > f.max {
			return 0, bad("the step must be a number from 1 to " + strconv.Itoa(f.max))
		}
		step = n
	}
	lo, hi := f.min, f.max
	switch {
	case rng == "*":
		if f.name == dowField.name {
			hi = 6 // '*' is every day once; 7 would repeat Sunday
		}
	case strings.Contains(rng, "-"):
		a, b, _ := strings.Cut(rng, "-")
		var err error
		if lo, err = f.value(a); err != nil {
			return 0, bad(err.Error())
		}
		if hi, err = f.value(b); err != nil {
			return 0, bad(err.Error())
		}
		if lo > hi {
			return 0, bad("the range runs backwards")
		}
	default:
		if hasStep {
			return 0, bad("a step needs '*' or a range before it")
		}
		v, err := f.value(rng)
		if err != nil {
			return 0, bad(err.Error())
		}
		lo, hi = v, v
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << v
	}
	return bits, nil
}

func (f field) value(text string) (int, error) {
	if text == "" {
		return 0, errors.New("a value is missing")
	}
	for i, n := range f.names {
		if strings.EqualFold(text, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(text)
	if err != nil || v < f.min || v > f.max {
		return 0, fmt.Errorf("values run from %d to %d", f.min, f.max)
	}
	return v, nil
}
