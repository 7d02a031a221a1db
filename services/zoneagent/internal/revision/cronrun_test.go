package revision

import (
	"errors"
	"testing"
	"time"
)

func TestCronRunChecks(t *testing.T) {
	const id = "0190b1c2-0000-7000-8000-000000000001"
	good := CronRun{RunID: id, AppID: id, DeployID: id, Job: "nightly", Command: "echo hi", Timeout: time.Minute}
	tests := []struct {
		name    string
		edit    func(*CronRun)
		invalid bool   // dead-lettered
		refusal string // reported FAILED
	}{
		{"good", func(*CronRun) {}, false, ""},
		{"no run id", func(c *CronRun) { c.RunID = "" }, true, ""},
		{"bad app id", func(c *CronRun) { c.AppID = "../x" }, true, ""},
		{"no deploy", func(c *CronRun) { c.DeployID = "" }, false, "the run names no deploy"},
		{"bad job name", func(c *CronRun) { c.Job = "Nightly.job" }, false, "the run's job name is not valid"},
		{"no command", func(c *CronRun) { c.Command = "" }, false, "the run has no command"},
		{"no timeout", func(c *CronRun) { c.Timeout = 0 }, false, "the run has no timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			if err := c.Check(); errors.Is(err, ErrInvalid) != tt.invalid {
				t.Fatalf("Check() = %v, want invalid %v", err, tt.invalid)
			}
			if tt.invalid {
				return
			}
			if got := c.Refusal(); got != tt.refusal {
				t.Fatalf("Refusal() = %q, want %q", got, tt.refusal)
			}
		})
	}
	if got := good.Process(); got != "cron.nightly."+id {
		t.Fatalf("Process() = %q", got)
	}
}

func TestCronStatusEnded(t *testing.T) {
	for s, want := range map[CronStatus]bool{CronAccepted: false, CronRunning: false, CronSucceeded: true, CronFailed: true, CronTimedOut: true, CronCancelled: true} {
		if s.Ended() != want {
			t.Errorf("%s.Ended() = %v", s, !want)
		}
	}
}
