package cron

import (
	"strings"
	"testing"
	"time"
)

func TestDueTicksAndDecide(t *testing.T) {
	every := func(spec string) Schedule {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := utc("2026-11-29T10:00:20Z")
	for _, c := range []struct {
		name            string
		spec, next      string
		enabled, hold   bool
		wantTicks       int
		wantSkips       []SkipReason // of the last ticks, oldest first
		wantNext        string
		wantDroppedNote bool
	}{
		{"one tick on time runs", "* * * * *", "2026-11-29T10:00:00Z", true, false, 1, []SkipReason{""}, "2026-11-29T10:01:00Z", false},
		{"not due yet", "* * * * *", "2026-11-29T10:01:00Z", true, false, 0, nil, "2026-11-29T10:01:00Z", false},
		{"missed ticks then the latest runs", "* * * * *", "2026-11-29T09:57:00Z", true, false, 4, []SkipReason{SkipMissed, SkipMissed, SkipMissed, ""}, "2026-11-29T10:01:00Z", false},
		{"the latest 5 minutes late is missed", "55 * * * *", "2026-11-29T09:55:00Z", true, false, 1, []SkipReason{SkipMissed}, "2026-11-29T10:55:00Z", false},
		{"4 minutes late still runs", "56 * * * *", "2026-11-29T09:56:00Z", true, false, 1, []SkipReason{""}, "2026-11-29T10:56:00Z", false},
		{"disabled skips every tick", "* * * * *", "2026-11-29T09:58:00Z", false, false, 3, []SkipReason{SkipDisabled, SkipDisabled, SkipDisabled}, "2026-11-29T10:01:00Z", false},
		{"hold skips the latest", "* * * * *", "2026-11-29T09:59:00Z", true, true, 2, []SkipReason{SkipMissed, SkipHold}, "2026-11-29T10:01:00Z", false},
		{"a long outage keeps the newest ticks", "* * * * *", "2026-11-29T00:00:00Z", true, false, KeptTicks, []SkipReason{SkipMissed, ""}, "2026-11-29T10:01:00Z", true},
		{"a year disabled stays bounded", "* * * * *", "2025-11-29T00:00:00Z", false, false, KeptTicks, []SkipReason{SkipDisabled}, "2026-11-29T10:01:00Z", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			due := every(c.spec).DueTicks(utc(c.next), now, time.UTC)
			if len(due.Ticks) != c.wantTicks || !due.Next.Equal(utc(c.wantNext)) {
				t.Fatalf("ticks %d next %s, want %d and %s", len(due.Ticks), due.Next, c.wantTicks, c.wantNext)
			}
			ds := Decide(due, now, c.enabled, c.hold)
			tail := ds[len(ds)-len(c.wantSkips):]
			for i, want := range c.wantSkips {
				if tail[i].Skip != want {
					t.Fatalf("decision %d: %q, want %q (%+v)", i, tail[i].Skip, want, tail)
				}
			}
			for i := 1; i < len(ds); i++ {
				if !ds[i].ScheduledFor.After(ds[i-1].ScheduledFor) {
					t.Fatalf("ticks out of order at %d", i)
				}
			}
			if c.wantTicks > 0 && !ds[len(ds)-1].ScheduledFor.Equal(now.Truncate(time.Minute)) && c.spec == "* * * * *" {
				t.Fatalf("latest tick %s", ds[len(ds)-1].ScheduledFor)
			}
			if got := len(ds) > 0 && strings.Contains(ds[0].Message, "earlier ticks"); got != c.wantDroppedNote {
				t.Fatalf("summary note: %v (%q)", got, ds[0].Message)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	for _, c := range []struct {
		p                 Policy
		inProgress        int
		start, cancelling bool
	}{
		{Forbid, 0, true, false}, {Forbid, 1, false, false},
		{Replace, 0, true, false}, {Replace, 2, true, true},
		{Allow, 0, true, false}, {Allow, 3, true, false},
		{Allow, MaxOverlapping - 1, true, false}, {Allow, MaxOverlapping, false, false},
	} {
		start, cancel := c.p.Admit(c.inProgress)
		if start != c.start || cancel != c.cancelling {
			t.Errorf("%s with %d in progress: start %v cancel %v", c.p, c.inProgress, start, cancel)
		}
	}
}

func TestProgress(t *testing.T) {
	at := utc("2026-11-29T10:00:00Z")
	r := Run{Status: Pending}
	if !r.Progress(Running, -1, "", at) || r.Status != Running || !r.StartedAt.Equal(at) {
		t.Fatalf("running: %+v", r)
	}
	if r.Progress(Running, -1, "", at.Add(time.Second)) {
		t.Fatal("a repeated RUNNING changed the run")
	}
	end := at.Add(time.Minute)
	if !r.Progress(Failed, 3, "", end) || r.Status != Failed || *r.ExitCode != 3 || !r.FinishedAt.Equal(end) {
		t.Fatalf("failed: %+v", r)
	}
	if r.Progress(Succeeded, 0, "", end.Add(time.Second)) || r.Status != Failed {
		t.Fatal("a report after the end changed the run")
	}
	p := Run{Status: Pending}
	if !p.Progress(TimedOut, -1, "", end) || p.ExitCode != nil || p.StartedAt == nil {
		t.Fatalf("timed out without a start report: %+v", p)
	}
}
