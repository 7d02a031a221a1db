package cron

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// Each case lists the firings after `after`, in UTC, in order.
func TestNext(t *testing.T) {
	for _, c := range []struct {
		name, spec, zone, after string
		want                    []string
	}{
		{"daily in Tokyo", "0 9 * * *", "Asia/Tokyo", "2026-11-29T10:00:00Z", []string{"2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z"}},
		{"every minute", "* * * * *", "UTC", "2026-11-29T10:00:30Z", []string{"2026-11-29T10:01:00Z", "2026-11-29T10:02:00Z"}},
		{"steps and lists", "*/20 1,3 * * *", "UTC", "2026-11-29T01:30:00Z", []string{"2026-11-29T01:40:00Z", "2026-11-29T03:00:00Z", "2026-11-29T03:20:00Z"}},
		// Vixie: both day fields restricted → either matches (Fridays OR the 13th).
		{"dom or dow", "0 0 13 * 5", "UTC", "2026-11-01T00:00:00Z", []string{"2026-11-06T00:00:00Z", "2026-11-13T00:00:00Z", "2026-11-20T00:00:00Z"}},
		// A day field starting with '*' → both must match (odd days that are Fridays).
		{"dom star and dow", "0 0 */2 * 5", "UTC", "2026-11-01T00:00:00Z", []string{"2026-11-13T00:00:00Z", "2026-11-27T00:00:00Z"}},
		{"dow 7 is Sunday", "0 0 * * 7", "UTC", "2026-11-29T00:00:00Z", []string{"2026-12-06T00:00:00Z"}},
		{"dow range to 7", "0 0 * * 5-7", "UTC", "2026-11-26T12:00:00Z", []string{"2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z", "2026-12-04T00:00:00Z"}},
		{"names", "15 10 * JAN-mar Mon-FRI", "UTC", "2026-03-31T12:00:00Z", []string{"2027-01-01T10:15:00Z", "2027-01-04T10:15:00Z"}},
		{"@weekly", "@weekly", "UTC", "2026-11-25T00:00:00Z", []string{"2026-11-29T00:00:00Z", "2026-12-06T00:00:00Z"}},
		{"@monthly", "@monthly", "Europe/Prague", "2026-11-25T00:00:00Z", []string{"2026-11-30T23:00:00Z", "2026-12-31T23:00:00Z"}},
		{"@yearly", "@annually", "UTC", "2026-11-25T00:00:00Z", []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"leap day", "0 12 29 2 *", "UTC", "2026-11-25T00:00:00Z", []string{"2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z"}},

		// Europe/Prague springs forward on 2026-03-29 at 02:00 CET (01:00Z) to 03:00 CEST.
		{"Prague spring: fixed 02:30 runs at 03:00", "30 2 * * *", "Europe/Prague", "2026-03-28T12:00:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"Prague spring: two fixed minutes in the gap run once", "0,30 2 * * *", "Europe/Prague", "2026-03-28T12:00:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"}},
		{"Prague spring: fixed 03:00 once", "0 3 * * *", "Europe/Prague", "2026-03-28T12:00:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T01:00:00Z"}},
		{"Prague spring: every 15 minutes skips the hour", "*/15 * * * *", "Europe/Prague", "2026-03-29T00:30:00Z", []string{"2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"}},
		{"Prague spring: a step hour skips the gap", "30 */1 * * *", "Europe/Prague", "2026-03-29T00:00:00Z", []string{"2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z"}},
		// It falls back on 2026-10-25 at 03:00 CEST (01:00Z) to 02:00 CET.
		{"Prague fall: fixed 02:30 once, the first time", "30 2 * * *", "Europe/Prague", "2026-10-24T12:00:00Z", []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"Prague fall: every 15 minutes twice in the repeated hour", "*/15 * * * *", "Europe/Prague", "2026-10-25T00:20:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-25T00:45:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:15:00Z", "2026-10-25T01:30:00Z", "2026-10-25T01:45:00Z", "2026-10-25T02:00:00Z"}},
		{"Prague fall: hourly twice at 02:00", "@hourly", "Europe/Prague", "2026-10-24T23:30:00Z", []string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"Prague fall: a minute wildcard in a fixed hour repeats", "*/30 2 * * *", "Europe/Prague", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:00:00Z"}},

		// America/New_York springs forward on 2026-03-08 at 02:00 EST (07:00Z) to 03:00 EDT.
		{"New York spring: fixed 02:30 runs at 03:00", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"New York spring: every 15 minutes", "*/15 * * * *", "America/New_York", "2026-03-08T06:40:00Z", []string{"2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z"}},
		// It falls back on 2026-11-01 at 02:00 EDT (06:00Z) to 01:00 EST.
		{"New York fall: fixed 01:30 once", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"New York fall: daily midnight", "@daily", "America/New_York", "2026-10-31T12:00:00Z", []string{"2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"}},
		{"New York fall: every 30 minutes twice", "*/30 * * * *", "America/New_York", "2026-11-01T05:10:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z"}},
		{"New York fall: from inside the repeated hour", "30 1 * * *", "America/New_York", "2026-11-01T06:10:00Z", []string{"2026-11-02T06:30:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			loc := mustLoad(t, c.zone)
			at := utc(c.after)
			for i, w := range c.want {
				got := s.Next(at, loc)
				if !got.Equal(utc(w)) {
					t.Fatalf("firing %d after %s: got %s, want %s", i+1, at.Format(time.RFC3339), got.Format(time.RFC3339), w)
				}
				if got.Location() != time.UTC {
					t.Fatalf("Next answers in %s, want UTC", got.Location())
				}
				at = got
			}
		})
	}
}

func TestNeverFires(t *testing.T) {
	s, err := Parse("0 0 30 2 *")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(utc("2026-01-01T00:00:00Z"), time.UTC); !got.IsZero() {
		t.Fatalf("Feb 30 fires at %s", got)
	}
	if got := s.MinInterval(utc("2026-01-01T00:00:00Z"), time.UTC); got != 0 {
		t.Fatalf("MinInterval of a schedule that never fires: %s", got)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, spec := range []string{
		"", "* * * *", "* * * * * *", "60 * * * *", "-1 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *",
		"* * * 0 *", "* * * 13 *", "* * * * 8", "5/2 * * * *", "*/0 * * * *", "*/61 * * * *", "10-5 * * * *",
		"1,,2 * * * *", "a * * * *", "* * * foo *", "* * * * funday", "@reboot", "@every 5m", "1- * * * *", "@ daily",
	} {
		if _, err := Parse(spec); !errors.Is(err, ErrInvalidSchedule) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidSchedule", spec, err)
		}
	}
}

func TestMinInterval(t *testing.T) {
	from := utc("2026-01-01T00:00:00Z")
	for _, c := range []struct {
		spec, zone string
		want       time.Duration
	}{
		{"*/15 * * * *", "UTC", 15 * time.Minute},
		{"* * * * *", "Europe/Prague", time.Minute},
		{"@hourly", "America/New_York", time.Hour},
		{"@daily", "UTC", 24 * time.Hour},
		// Midnight in Prague: the spring-forward day is 23 hours long in UTC.
		{"@daily", "Europe/Prague", 23 * time.Hour},
		// 02:30 runs at 03:00 on the spring-forward day, half an hour before 03:30.
		{"30 2,3 * * *", "Europe/Prague", 30 * time.Minute},
		{"0 9 * * 1", "UTC", 7 * 24 * time.Hour},
		{"@yearly", "UTC", 365 * 24 * time.Hour},
	} {
		s, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MinInterval(from, mustLoad(t, c.zone)); got != c.want {
			t.Errorf("MinInterval(%q in %s) = %s, want %s", c.spec, c.zone, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	now := utc("2026-11-29T10:00:00Z")
	good := Job{Name: "nightly-report", Schedule: "@daily", Timezone: "Europe/Prague", Command: "bin/report", Policy: Forbid, TimeoutSeconds: 60}
	if _, _, err := good.Check(now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field  string
		change func(*Job)
	}{
		{"name", func(j *Job) { j.Name = "Nightly" }},
		{"name", func(j *Job) { j.Name = "1st" }},
		{"name", func(j *Job) { j.Name = strings.Repeat("a", 31) }},
		{"schedule", func(j *Job) { j.Schedule = "every day" }},
		{"schedule", func(j *Job) { j.Schedule = "0 0 31 2 *" }},
		{"timezone", func(j *Job) { j.Timezone = "Mars/Olympus" }},
		{"timezone", func(j *Job) { j.Timezone = "Local" }},
		{"timezone", func(j *Job) { j.Timezone = "" }},
		{"command", func(j *Job) { j.Command = "" }},
		{"command", func(j *Job) { j.Command = strings.Repeat("x", MaxCommandBytes+1) }},
		{"concurrencyPolicy", func(j *Job) { j.Policy = "queue" }},
		{"timeoutSeconds", func(j *Job) { j.TimeoutSeconds = 0 }},
	} {
		j := good
		c.change(&j)
		_, _, err := j.Check(now)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ErrInvalidJob) {
			t.Errorf("%+v: got %v, want a %s error", j, err, c.field)
		}
	}
}
