package usecase_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// fakeCronRunner counts the runs it was handed and the cancels it was told.
type fakeCronRunner struct {
	mu        sync.Mutex
	started   []revision.CronRun
	cancelled []string
}

func (f *fakeCronRunner) StartCron(run revision.CronRun, _ usecase.CronReporter) {
	f.mu.Lock()
	f.started = append(f.started, run)
	f.mu.Unlock()
}

func (f *fakeCronRunner) CancelCron(runID string) {
	f.mu.Lock()
	f.cancelled = append(f.cancelled, runID)
	f.mu.Unlock()
}

type cronRig struct {
	t      *testing.T
	pool   *pgxpool.Pool
	st     *store.Store
	runner *fakeCronRunner
	crons  *usecase.CronRuns
	app    string
	deploy string // an active source revision of app
}

func newCronRig(t *testing.T) *cronRig {
	t.Helper()
	pool := storetest.NewPool(t)
	st := store.New(pool)
	r := &cronRig{t: t, pool: pool, st: st, runner: &fakeCronRunner{}, app: uuid.NewString(), deploy: uuid.NewString()}
	r.crons = usecase.NewCronRuns(storetest.Zone, st, r.runner, nil)
	r.revision(r.deploy, revision.KindSource, revision.StateActive)
	return r
}

// revision records a revision of the rig's app in state.
func (r *cronRig) revision(deployID string, kind revision.Kind, state revision.State) {
	r.t.Helper()
	ctx := context.Background()
	err := r.st.InTx(ctx, func(tx usecase.Tx) error {
		if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: deployID, AppID: r.app, Slug: "svc", Kind: kind}); err != nil {
			return err
		}
		if state == revision.StatePending {
			return nil
		}
		return tx.SetState(ctx, deployID, revision.StatePending, state)
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

func (r *cronRig) run(command string) revision.CronRun {
	return revision.CronRun{RunID: uuid.NewString(), AppID: r.app, DeployID: r.deploy, Job: "nightly", Command: command, Timeout: time.Minute}
}

// deliver handles a StartCronRun as the consumer does: in a transaction, the launch after
// it commits.
func (r *cronRig) deliver(run revision.CronRun) (launched bool, err error) {
	ctx := context.Background()
	var launch func()
	err = r.st.InCronTx(ctx, func(tx usecase.CronTx) error {
		var err error
		launch, err = r.crons.Start(ctx, tx, run)
		return err
	})
	if err == nil && launch != nil {
		launch()
	}
	return launch != nil, err
}

func (r *cronRig) cancel(runID string) {
	r.t.Helper()
	ctx := context.Background()
	var kill func()
	if err := r.st.InCronTx(ctx, func(tx usecase.CronTx) error {
		var err error
		kill, err = r.crons.Cancel(ctx, tx, runID, r.app)
		return err
	}); err != nil {
		r.t.Fatal(err)
	}
	if kill != nil {
		kill()
	}
}

// reports are the run's reports in the outbox, in order.
func (r *cronRig) reports(runID string) []*zonev1.CronRunProgress {
	r.t.Helper()
	var out []*zonev1.CronRunProgress
	rows, err := r.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyCronProgressed)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			r.t.Fatal(err)
		}
		var p zonev1.CronRunProgress
		if err := proto.Unmarshal(b, &p); err != nil {
			r.t.Fatal(err)
		}
		if p.GetRunId() == runID {
			out = append(out, &p)
		}
	}
	return out
}

// logLines lists the lines in the outbox's log batches of process, as "stream: message".
func (r *cronRig) logLines(process string) []string {
	r.t.Helper()
	rows, err := r.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, zonebus.KeyLogBatch)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			r.t.Fatal(err)
		}
		var batch logsv1.LogBatch
		if err := proto.Unmarshal(b, &batch); err != nil {
			r.t.Fatal(err)
		}
		for _, e := range batch.GetEntries() {
			if e.GetProcess() == process {
				out = append(out, e.GetStream()+": "+e.GetMessage())
			}
		}
	}
	return out
}

// statuses lists a run's reported statuses, with the message of each that has one.
func statuses(reports []*zonev1.CronRunProgress) []string {
	var out []string
	for _, p := range reports {
		s := p.GetStatus().String()
		if p.GetMessage() != "" {
			s += ": " + p.GetMessage()
		}
		out = append(out, s)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A redelivered StartCronRun finds its run on record and starts nothing new; the run's
// start and end are reported once each, whatever reports them again.
func TestCronRunRedeliveryStartsNothingNew(t *testing.T) {
	r := newCronRig(t)
	run := r.run("echo hi")
	for i, want := range []bool{true, false, false} {
		launched, err := r.deliver(run)
		if err != nil || launched != want {
			t.Fatalf("delivery %d: launched %v, err %v; want launched %v", i+1, launched, err, want)
		}
	}
	if len(r.runner.started) != 1 || r.runner.started[0] != run {
		t.Fatalf("runner got %+v", r.runner.started)
	}
	ctx := context.Background()
	if !r.crons.Started(ctx, run) {
		t.Fatal("an accepted run may start")
	}
	if r.crons.Started(ctx, run) {
		t.Fatal("a running run started again")
	}
	r.crons.Ended(ctx, run, revision.CronEnd{Status: revision.CronFailed, ExitCode: 3})
	r.crons.Ended(ctx, run, revision.CronEnd{Status: revision.CronSucceeded})
	got := r.reports(run.RunID)
	if !equal(statuses(got), []string{"CRON_RUN_STATUS_RUNNING", "CRON_RUN_STATUS_FAILED"}) || got[1].GetExitCode() != 3 || got[1].GetZone() != storetest.Zone {
		t.Fatalf("reports %v", got)
	}
	if lines := r.logLines(run.Process()); !equal(lines, []string{"system: Cron run started", "system: Cron run failed: exited with status 3"}) {
		t.Fatalf("log lines %v", lines)
	}
	// A redelivery after the end starts nothing either.
	if launched, err := r.deliver(run); launched || err != nil {
		t.Fatalf("after the end: launched %v, err %v", launched, err)
	}
	if len(r.runner.started) != 1 {
		t.Fatalf("runner got %d runs", len(r.runner.started))
	}
}

// A run that cannot start is reported FAILED at once, saying why; one without its ids is
// refused for good (dead-lettered).
func TestCronRunRefusals(t *testing.T) {
	r := newCronRig(t)
	pending, static, discarded := uuid.NewString(), uuid.NewString(), uuid.NewString()
	r.revision(pending, revision.KindSource, revision.StatePending)
	r.revision(static, revision.KindStatic, revision.StateActive)
	r.revision(discarded, revision.KindSource, revision.StateDiscarded)
	tests := []struct {
		name string
		edit func(*revision.CronRun)
		want string
	}{
		{"unknown deploy", func(c *revision.CronRun) { c.DeployID = uuid.NewString() }, "this zone has no record of the run's deploy"},
		{"another app's deploy", func(c *revision.CronRun) { c.AppID = uuid.NewString() }, "this zone has no record of the run's deploy"},
		{"not prepared yet", func(c *revision.CronRun) { c.DeployID = pending }, "the run's deploy is not ready on this zone yet"},
		{"static", func(c *revision.CronRun) { c.DeployID = static }, "a static site runs no cron jobs"},
		{"discarded", func(c *revision.CronRun) { c.DeployID = discarded }, "the run's deploy is no longer on this zone"},
		{"no command", func(c *revision.CronRun) { c.Command = "" }, "the run has no command"},
		{"no timeout", func(c *revision.CronRun) { c.Timeout = 0 }, "the run has no timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := r.run("echo hi")
			tt.edit(&run)
			launched, err := r.deliver(run)
			if launched || err != nil {
				t.Fatalf("launched %v, err %v", launched, err)
			}
			if got := statuses(r.reports(run.RunID)); !equal(got, []string{"CRON_RUN_STATUS_FAILED: " + tt.want}) {
				t.Fatalf("reports %v", got)
			}
			if got := r.logLines(run.Process()); !equal(got, []string{"system: Cron run failed: " + tt.want}) {
				t.Fatalf("log lines %v", got)
			}
		})
	}
	bad := r.run("echo hi")
	bad.RunID = "../x"
	if _, err := r.deliver(bad); !errors.Is(err, revision.ErrInvalid) {
		t.Fatalf("a run without a valid id: %v", err)
	}
	if len(r.runner.started) != 0 {
		t.Fatalf("runner got %+v", r.runner.started)
	}
}

// A run cancelled before its process started ends CANCELLED and then never starts; a
// running one is killed through the runner and reports its own end; an ended one is left.
func TestCronRunCancel(t *testing.T) {
	r := newCronRig(t)
	ctx := context.Background()
	early, running := r.run("sleep 60"), r.run("sleep 60")
	for _, run := range []revision.CronRun{early, running} {
		if launched, err := r.deliver(run); !launched || err != nil {
			t.Fatalf("launched %v, err %v", launched, err)
		}
	}
	r.cancel(early.RunID)
	if r.crons.Started(ctx, early) {
		t.Fatal("a run cancelled before it began started")
	}
	if got := statuses(r.reports(early.RunID)); !equal(got, []string{"CRON_RUN_STATUS_CANCELLED"}) {
		t.Fatalf("early: %v", got)
	}
	if !r.crons.Started(ctx, running) {
		t.Fatal("not started")
	}
	r.cancel(running.RunID)
	if len(r.runner.cancelled) != 2 || r.runner.cancelled[1] != running.RunID {
		t.Fatalf("runner told %v", r.runner.cancelled)
	}
	r.crons.Ended(ctx, running, revision.CronEnd{Status: revision.CronCancelled, ExitCode: -1})
	r.cancel(running.RunID) // ended: nothing more
	if len(r.runner.cancelled) != 2 {
		t.Fatalf("an ended run was cancelled again: %v", r.runner.cancelled)
	}
	if got := statuses(r.reports(running.RunID)); !equal(got, []string{"CRON_RUN_STATUS_RUNNING", "CRON_RUN_STATUS_CANCELLED"}) {
		t.Fatalf("running: %v", got)
	}
}

// A run the zone held when it stopped is reported FAILED at its next start, once; a run that
// had ended is not reported again.
func TestCronRunsRecoverAfterARestart(t *testing.T) {
	r := newCronRig(t)
	ctx := context.Background()
	running, accepted, done := r.run("sleep 60"), r.run("sleep 60"), r.run("true")
	for _, run := range []revision.CronRun{running, accepted, done} {
		if _, err := r.deliver(run); err != nil {
			t.Fatal(err)
		}
	}
	r.crons.Started(ctx, running)
	r.crons.Started(ctx, done)
	r.crons.Ended(ctx, done, revision.CronEnd{Status: revision.CronSucceeded})

	restarted := usecase.NewCronRuns(storetest.Zone, r.st, &fakeCronRunner{}, nil)
	for range 2 {
		if err := restarted.Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	failed := "CRON_RUN_STATUS_FAILED: " + usecase.ZoneRestarted
	if got := statuses(r.reports(running.RunID)); !equal(got, []string{"CRON_RUN_STATUS_RUNNING", failed}) {
		t.Fatalf("running: %v", got)
	}
	if got := statuses(r.reports(accepted.RunID)); !equal(got, []string{failed}) {
		t.Fatalf("accepted: %v", got)
	}
	if got := statuses(r.reports(done.RunID)); !equal(got, []string{"CRON_RUN_STATUS_RUNNING", "CRON_RUN_STATUS_SUCCEEDED"}) {
		t.Fatalf("done: %v", got)
	}
	// Its report after the restart changes nothing: the record says failed.
	r.crons.Ended(ctx, running, revision.CronEnd{Status: revision.CronSucceeded})
	if got := r.reports(running.RunID); len(got) != 2 {
		t.Fatalf("reported again: %v", statuses(got))
	}
}

func TestCronLine(t *testing.T) {
	for _, tt := range []struct {
		end  revision.CronEnd
		want string
	}{
		{revision.CronEnd{Status: revision.CronRunning, ExitCode: -1}, "Cron run started"},
		{revision.CronEnd{Status: revision.CronSucceeded}, "Cron run succeeded"},
		{revision.CronEnd{Status: revision.CronFailed, ExitCode: 2}, "Cron run failed: exited with status 2"},
		{revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: "no tree"}, "Cron run failed: no tree"},
		{revision.CronEnd{Status: revision.CronTimedOut, ExitCode: -1, Message: "killed after its timeout of 1s"}, "Cron run timed out: killed after its timeout of 1s"},
		{revision.CronEnd{Status: revision.CronCancelled, ExitCode: -1}, "Cron run cancelled"},
	} {
		if got := usecase.CronLine(tt.end); got != tt.want {
			t.Errorf("CronLine(%+v) = %q, want %q", tt.end, got, tt.want)
		}
	}
}
