package cron

import "time"

// Status is where a run stands.
type Status string

const (
	Pending   Status = "pending" // written and sent to the zone
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	TimedOut  Status = "timed_out"
	Cancelled Status = "cancelled"
	Skipped   Status = "skipped"
)

// InProgress says the run has not ended.
func (s Status) InProgress() bool { return s == Pending || s == Running }

// SkipReason says why a tick left a skipped run.
type SkipReason string

const (
	SkipOverlap  SkipReason = "overlap"  // forbid, with a run in progress
	SkipMissed   SkipReason = "missed"   // nothing could fire it in time
	SkipDisabled SkipReason = "disabled" // the job was disabled
	SkipHold     SkipReason = "hold"     // the account's billing hold refuses new runs
)

// Trigger is what started a run.
type Trigger string

const (
	Scheduled Trigger = "scheduled"
	Manual    Trigger = "manual"
)

// Run is one tick of a job, or one manual run.
type Run struct {
	ID, JobID, AppID      string
	Trigger               Trigger
	ScheduledFor          time.Time
	Status                Status
	SkipReason            SkipReason
	ExitCode              *int
	StartedAt, FinishedAt *time.Time
	DeployID, Message     string
	CreatedAt             time.Time
}

// NoReportMessage ends a run the zone never reported on.
const NoReportMessage = "the zone did not report"

// Report deadlines: a pending run the zone has not started within PendingGrace, or a running
// one past its timeout plus ReportGrace, failed without a word.
const (
	PendingGrace = 2 * time.Minute
	ReportGrace  = 2 * time.Minute
)

// Progress applies a zone's report; it returns false when the run had already ended (a
// late or repeated report changes nothing).
func (r *Run) Progress(to Status, exitCode int, message string, at time.Time) bool {
	if !r.Status.InProgress() {
		return false
	}
	if to == Running {
		if r.Status == Running {
			return false
		}
		r.Status, r.StartedAt = Running, &at
		return true
	}
	r.Status, r.FinishedAt = to, &at
	if r.StartedAt == nil {
		r.StartedAt = &at
	}
	if exitCode >= 0 && (to == Succeeded || to == Failed) {
		code := exitCode
		r.ExitCode = &code
	}
	r.Message = message
	return true
}
