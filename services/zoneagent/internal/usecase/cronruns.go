package usecase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
)

// CronTx is the cron runs' part of the zone's record, in one transaction; events published
// through it commit with it.
type CronTx interface {
	Publish(ctx context.Context, key string, msg proto.Message) error
	// AddCronRun records a run as accepted; false when its id is on record already (a
	// redelivery), and nothing changes.
	AddCronRun(ctx context.Context, run revision.CronRun) (bool, error)
	// CronRunStatus is the status of the app's run, locked; "" when the zone has none.
	CronRunStatus(ctx context.Context, runID, appID string) (revision.CronStatus, error)
	// MoveCronRun moves a run to to from one of from; false when it was in none of them.
	MoveCronRun(ctx context.Context, runID string, to revision.CronEnd, from ...revision.CronStatus) (bool, error)
	// EndUnfinishedCronRuns marks failed every run accepted or running and returns them.
	EndUnfinishedCronRuns(ctx context.Context) ([]revision.CronRun, error)
	// FindRevision loads a revision without locking it; false when the zone has none.
	FindRevision(ctx context.Context, deployID string) (revision.Revision, bool, error)
}

// CronStore opens the transactions of CronRuns outside a consumer's.
type CronStore interface {
	InCronTx(ctx context.Context, fn func(CronTx) error) error
}

// CronRunner runs cron runs, each in a fresh sandbox (or container) of its own.
type CronRunner interface {
	// StartCron runs run and returns at once. Before the command starts it asks
	// report.Started, and starts nothing when that says no; once the run ended it tells
	// report.Ended (unless the zone is stopping: the next start reports the run).
	StartCron(run revision.CronRun, report CronReporter)
	// CancelCron kills a run this runner holds; it then ends CANCELLED. A run it does not
	// hold (ended already) is left alone.
	CancelCron(runID string)
}

// CronReporter records and reports a run's start and end.
type CronReporter interface {
	Started(ctx context.Context, run revision.CronRun) bool
	Ended(ctx context.Context, run revision.CronRun, end revision.CronEnd)
}

// ZoneRestarted is the message of a run the zone stopped or crashed during: its process did
// not survive, and nobody knows how it would have ended.
const ZoneRestarted = "the zone restarted during the run"

// CronRuns takes the control plane's cron run commands: it records each run once (a
// redelivery starts nothing new), hands it to the runner after the command's transaction
// commits, and reports every change of the run on zone.cron.progressed through the outbox.
type CronRuns struct {
	zone   string
	store  CronStore
	runner CronRunner // nil on a zone that runs no services: every run fails
	log    *slog.Logger
}

// NewCronRuns builds the use case; runner may be nil.
func NewCronRuns(zone string, store CronStore, runner CronRunner, log *slog.Logger) *CronRuns {
	if log == nil {
		log = slog.Default()
	}
	return &CronRuns{zone: zone, store: store, runner: runner, log: log}
}

// Zone is the zone the runs are on.
func (c *CronRuns) Zone() string { return c.zone }

// Recover reports FAILED every run the zone was running (or had accepted) when it last
// stopped. Call it before the cron commands are consumed.
func (c *CronRuns) Recover(ctx context.Context) error {
	return c.store.InCronTx(ctx, func(tx CronTx) error {
		runs, err := tx.EndUnfinishedCronRuns(ctx)
		if err != nil {
			return err
		}
		for _, run := range runs {
			if err := c.publish(ctx, tx, run, revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: ZoneRestarted}); err != nil {
				return err
			}
		}
		if len(runs) > 0 {
			c.log.WarnContext(ctx, "cron runs ended by a restart of the zone", "count", len(runs))
		}
		return nil
	})
}

// Start records a run in the command's transaction tx and returns what hands it to the
// runner, to be called once tx has committed (nil: nothing to start: a redelivery, or a run
// that cannot start and is reported FAILED in tx). A run without its ids is ErrInvalid.
func (c *CronRuns) Start(ctx context.Context, tx CronTx, run revision.CronRun) (launch func(), err error) {
	if err := run.Check(); err != nil {
		return nil, err
	}
	added, err := tx.AddCronRun(ctx, run)
	if err != nil || !added {
		return nil, err
	}
	if why, err := c.refusal(ctx, tx, run); err != nil || why != "" {
		if err != nil {
			return nil, err
		}
		return nil, c.end(ctx, tx, run, revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: why}, revision.CronAccepted)
	}
	return func() { c.runner.StartCron(run, c) }, nil
}

// refusal is why run cannot start here, or "".
func (c *CronRuns) refusal(ctx context.Context, tx CronTx, run revision.CronRun) (string, error) {
	if why := run.Refusal(); why != "" {
		return why, nil
	}
	if c.runner == nil {
		return "this zone runs no services", nil
	}
	rev, ok, err := tx.FindRevision(ctx, run.DeployID)
	switch {
	case err != nil:
		return "", err
	case !ok || rev.AppID != run.AppID:
		return "this zone has no record of the run's deploy", nil
	case rev.Kind.Static():
		return "a static site runs no cron jobs", nil
	case rev.State.Unprepared():
		return "the run's deploy is not ready on this zone yet", nil
	case rev.State == revision.StateFailed || rev.State == revision.StateDiscarded:
		return "the run's deploy is no longer on this zone", nil
	}
	return "", nil
}

// Cancel stops the app's run, in the command's transaction tx: a run not started yet ends
// CANCELLED in tx; a running one is killed by what Cancel returns, to be called once tx has
// committed, and reports CANCELLED as it ends. An ended or unknown run is left alone (nil).
func (c *CronRuns) Cancel(ctx context.Context, tx CronTx, runID, appID string) (kill func(), err error) {
	if !revision.ValidID(runID) || !revision.ValidID(appID) {
		return nil, errors.Join(revision.ErrInvalid, errors.New("a cron cancel needs a run id and an app id"))
	}
	status, err := tx.CronRunStatus(ctx, runID, appID)
	if err != nil || status == "" || status.Ended() {
		return nil, err
	}
	run := revision.CronRun{RunID: runID, AppID: appID}
	if status == revision.CronAccepted {
		if err := c.end(ctx, tx, run, revision.CronEnd{Status: revision.CronCancelled, ExitCode: -1}, revision.CronAccepted); err != nil {
			return nil, err
		}
	}
	if c.runner == nil {
		return nil, nil
	}
	// Also for a run just accepted: the runner may hold it already, before its Started.
	return func() { c.runner.CancelCron(runID) }, nil
}

// Started moves an accepted run to running and reports RUNNING; false when it is no longer
// accepted (cancelled meanwhile) or the record cannot be written: then nothing starts.
func (c *CronRuns) Started(ctx context.Context, run revision.CronRun) bool {
	moved := false
	err := c.store.InCronTx(ctx, func(tx CronTx) error {
		var err error
		moved, err = tx.MoveCronRun(ctx, run.RunID, revision.CronEnd{Status: revision.CronRunning, ExitCode: -1}, revision.CronAccepted)
		if err != nil || !moved {
			return err
		}
		return c.publish(ctx, tx, run, revision.CronEnd{Status: revision.CronRunning, ExitCode: -1})
	})
	if err != nil {
		c.log.WarnContext(ctx, "record a cron run's start; not started", "run", run.RunID, "err", err.Error())
		return false
	}
	return moved
}

// Ended records and reports how a run ended, once: a run that ended already (cancelled
// before it started) stays as it was.
func (c *CronRuns) Ended(ctx context.Context, run revision.CronRun, end revision.CronEnd) {
	err := c.store.InCronTx(ctx, func(tx CronTx) error {
		return c.end(ctx, tx, run, end, revision.CronAccepted, revision.CronRunning)
	})
	if err != nil {
		// The record still says running: the zone's next start reports the run FAILED.
		c.log.WarnContext(ctx, "record a cron run's end", "run", run.RunID, "status", string(end.Status), "err", err.Error())
	}
}

// end moves run to its end from one of from and, when it moved, reports it with a system
// line in the app's log.
func (c *CronRuns) end(ctx context.Context, tx CronTx, run revision.CronRun, end revision.CronEnd, from ...revision.CronStatus) error {
	moved, err := tx.MoveCronRun(ctx, run.RunID, end, from...)
	if err != nil || !moved {
		return err
	}
	return c.publish(ctx, tx, run, end)
}

// cronStatuses are the statuses' names on the bus.
var cronStatuses = map[revision.CronStatus]zonev1.CronRunStatus{
	revision.CronRunning:   zonev1.CronRunStatus_CRON_RUN_STATUS_RUNNING,
	revision.CronSucceeded: zonev1.CronRunStatus_CRON_RUN_STATUS_SUCCEEDED,
	revision.CronFailed:    zonev1.CronRunStatus_CRON_RUN_STATUS_FAILED,
	revision.CronTimedOut:  zonev1.CronRunStatus_CRON_RUN_STATUS_TIMED_OUT,
	revision.CronCancelled: zonev1.CronRunStatus_CRON_RUN_STATUS_CANCELLED,
}

// publish reports a run's status to the control plane and writes it as a system line of the
// app's log under the run's process (a run whose job is not known here, one cancelled
// before it started, gets no line).
func (c *CronRuns) publish(ctx context.Context, tx CronTx, run revision.CronRun, end revision.CronEnd) error {
	now := timestamppb.New(time.Now())
	err := tx.Publish(ctx, zonebus.KeyCronProgressed, &zonev1.CronRunProgress{
		RunId: run.RunID, AppId: run.AppID, Zone: c.zone, Status: cronStatuses[end.Status],
		ExitCode: int32(end.ExitCode), Message: end.Message, At: now,
	})
	if err != nil || run.Job == "" || run.DeployID == "" {
		return err
	}
	return tx.Publish(ctx, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{{
		AppId: run.AppID, DeployId: run.DeployID, Stream: "system", Process: run.Process(), Timestamp: now,
		Message: CronLine(end),
	}}})
}

// CronLine is the system log line of a run's status.
func CronLine(end revision.CronEnd) string {
	line := "Cron run " + strings.ReplaceAll(string(end.Status), "_", " ")
	switch {
	case end.Status == revision.CronRunning:
		return "Cron run started"
	case end.Message != "":
		return line + ": " + end.Message
	case end.Status == revision.CronFailed && end.ExitCode >= 0:
		return fmt.Sprintf("%s: exited with status %d", line, end.ExitCode)
	}
	return line
}
