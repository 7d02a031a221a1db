package revision

import (
	"fmt"
	"time"
)

// CronRun is one run of an app's cron job that the control plane asked this zone for: the
// command runs once, in a sandbox of its own, from the deploy's tree (or image) and with
// its environment snapshot.
type CronRun struct {
	RunID, AppID, DeployID string
	// Job is the cron job's name; with the run id it names the run's process.
	Job     string
	Command string
	// Timeout is how long the run may take before it is killed (TIMED_OUT).
	Timeout time.Duration
}

// Process is the name the run's output carries in the app's log, and its TORI_PROCESS.
func (c CronRun) Process() string { return "cron." + c.Job + "." + c.RunID }

// Check refuses, as ErrInvalid, a run without the ids a report needs: nothing can be
// reported about it, so the command is dead-lettered.
func (c CronRun) Check() error {
	if !ValidID(c.RunID) || !ValidID(c.AppID) {
		return fmt.Errorf("%w: a cron run needs a run id and an app id", ErrInvalid)
	}
	return nil
}

// Refusal is why a run with valid ids cannot start, for the customer ("" when it can): the
// run is then reported FAILED instead of hanging pending.
func (c CronRun) Refusal() string {
	switch {
	case !ValidID(c.DeployID):
		return "the run names no deploy"
	case !ValidProcessName(c.Job):
		return "the run's job name is not valid"
	case c.Command == "":
		return "the run has no command"
	case c.Timeout <= 0:
		return "the run has no timeout"
	}
	return ""
}

// CronStatus is where a cron run stands on this zone: accepted (recorded, its process not
// started), running, or one of the ends.
type CronStatus string

// Cron run statuses.
const (
	CronAccepted  CronStatus = "accepted"
	CronRunning   CronStatus = "running"
	CronSucceeded CronStatus = "succeeded"
	CronFailed    CronStatus = "failed"
	CronTimedOut  CronStatus = "timed_out"
	CronCancelled CronStatus = "cancelled"
)

// Ended reports whether nothing more happens to a run in s.
func (s CronStatus) Ended() bool { return s != CronAccepted && s != CronRunning && s != "" }

// CronEnd is how a run ended: its status, its exit status (-1 when it did not exit by
// itself) and, for a failure without one, why.
type CronEnd struct {
	Status   CronStatus
	ExitCode int
	Message  string
}
