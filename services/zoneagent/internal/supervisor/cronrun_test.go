package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/revision"
)

// processSink keeps each line with the process it came from.
type processSink struct {
	mu    sync.Mutex
	lines []string // "process stream: message"
}

func (s *processSink) Line(_, _, stream, msg string, _ int) {
	s.ProcessLine("", "", "", stream, msg, 0)
}

func (s *processSink) ProcessLine(_, _, process, stream, msg string, _ int) {
	s.mu.Lock()
	s.lines = append(s.lines, process+" "+stream+": "+msg)
	s.mu.Unlock()
}

func (s *processSink) has(line string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if l == line {
			return true
		}
	}
	return false
}

func (s *processSink) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// cronReports is the use case's side of the runner: it records what was reported and can
// refuse a start (the run was cancelled before it began).
type cronReports struct {
	mu      sync.Mutex
	refuse  map[string]bool
	started map[string]bool
	ends    map[string]revision.CronEnd
}

func newCronReports() *cronReports {
	return &cronReports{refuse: map[string]bool{}, started: map[string]bool{}, ends: map[string]revision.CronEnd{}}
}

func (c *cronReports) Started(_ context.Context, run revision.CronRun) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started[run.RunID] = !c.refuse[run.RunID]
	return c.started[run.RunID]
}

func (c *cronReports) Ended(_ context.Context, run revision.CronRun, end revision.CronEnd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, twice := c.ends[run.RunID]; twice {
		panic("a run ended twice: " + run.RunID)
	}
	c.ends[run.RunID] = end
}

func (c *cronReports) isStarted(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started[runID]
}

// end waits for the run's end.
func (c *cronReports) end(t *testing.T, runID string) revision.CronEnd {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		end, ok := c.ends[runID]
		c.mu.Unlock()
		if ok {
			return end
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s did not end", runID)
	return revision.CronEnd{}
}

// Cron runs of a prepared source revision: each in a sandbox of its own in the revision's
// tree with its environment and TORI_PROCESS but no PORT, its output in the app's log under
// its process; the exit status, the timeout, a cancel and the app's stop each give their
// status; a run the use case no longer lets start runs nothing.
func TestCronRunsOfASourceRevision(t *testing.T) {
	r := newRig(t)
	out := &processSink{}
	r.l.Source.Output.Sink = out
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}), nil)
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	image := revision.Revision{DeployID: uuid.NewString(), AppID: app, Kind: revision.KindImage, Image: "example/app:1"}
	// Each run gets the plan's instance memory in a cgroup of its own.
	withMemory := rev
	withMemory.InstanceMemoryBytes = 96 << 20
	r.l.Revision = func(_ context.Context, id string) (revision.Revision, error) {
		if id == image.DeployID {
			return image, nil
		}
		return withMemory, nil
	}
	reports := newCronReports()
	start := func(command string, timeout time.Duration) revision.CronRun {
		run := revision.CronRun{RunID: uuid.NewString(), AppID: app, DeployID: rev.DeployID, Job: "nightly", Command: command, Timeout: timeout}
		r.l.StartCron(run, reports)
		return run
	}
	waitStarted := func(run revision.CronRun) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !reports.isStarted(run.RunID) {
			if time.Now().After(deadline) {
				t.Fatalf("run %s not started", run.RunID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	ok := start(`echo "out $TORI_PROCESS ${PORT:-noport} $SECRET_TOKEN"; echo oops >&2`, time.Minute)
	failing := start("exit 3", time.Minute)
	slow := start("sleep 30", time.Second)
	cancelled := start("sleep 30", time.Minute)
	stopped := start("sleep 30", time.Minute)
	refusedRun := revision.CronRun{RunID: uuid.NewString(), AppID: app, DeployID: rev.DeployID, Job: "nightly", Command: "touch ran", Timeout: time.Minute}
	reports.mu.Lock()
	reports.refuse[refusedRun.RunID] = true
	reports.mu.Unlock()
	r.l.StartCron(refusedRun, reports)
	imageRun := revision.CronRun{RunID: uuid.NewString(), AppID: app, DeployID: image.DeployID, Job: "nightly", Command: "true", Timeout: time.Minute}
	r.l.StartCron(imageRun, reports)

	if end := reports.end(t, ok.RunID); end != (revision.CronEnd{Status: revision.CronSucceeded}) {
		t.Fatalf("ok: %+v\n%s", end, out.all())
	}
	if line := ok.Process() + " stdout: out " + ok.Process() + " noport [redacted]"; !out.has(line) {
		t.Fatalf("no %q in\n%s", line, out.all())
	}
	if line := ok.Process() + " stderr: oops"; !out.has(line) {
		t.Fatalf("no %q in\n%s", line, out.all())
	}
	if end := reports.end(t, failing.RunID); end != (revision.CronEnd{Status: revision.CronFailed, ExitCode: 3}) {
		t.Fatalf("failing: %+v", end)
	}
	if end := reports.end(t, slow.RunID); end.Status != revision.CronTimedOut || end.ExitCode != -1 {
		t.Fatalf("slow: %+v", end)
	}
	waitStarted(cancelled)
	cg := r.l.Source.Sandbox.Cgroups
	limitFile := filepath.Join(cg.LeafDir("memory", app, cancelled.Process()), "memory.max")
	if !cg.V2 {
		limitFile = filepath.Join(cg.LeafDir("memory", app, cancelled.Process()), "memory.limit_in_bytes")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(limitFile)
		if strings.TrimSpace(string(b)) == "100663296" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's cgroup %s holds memory limit %q", limitFile, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.l.CancelCron(cancelled.RunID)
	if end := reports.end(t, cancelled.RunID); end.Status != revision.CronCancelled || end.ExitCode != -1 {
		t.Fatalf("cancelled: %+v", end)
	}
	if end := reports.end(t, imageRun.RunID); end != (revision.CronEnd{Status: revision.CronFailed, ExitCode: -1, Message: cronImageUnavailable}) {
		t.Fatalf("image run: %+v", end)
	}
	waitStarted(stopped)
	r.l.stopCronRuns(app)
	if end := reports.end(t, stopped.RunID); end.Status != revision.CronCancelled || end.Message != "the app was stopped" {
		t.Fatalf("stopped: %+v", end)
	}

	// The refused run started nothing and reported nothing; the runner holds no run now.
	reports.mu.Lock()
	_, ended := reports.ends[refusedRun.RunID]
	reports.mu.Unlock()
	if ended {
		t.Fatal("a run the use case refused reported an end")
	}
	if _, err := os.Stat(filepath.Join(r.l.Identities.Tree(app, rev.DeployID), "ran")); !os.IsNotExist(err) {
		t.Fatalf("a refused run ran its command: %v", err)
	}
	r.l.crons.mu.Lock()
	held := len(r.l.crons.runs)
	r.l.crons.mu.Unlock()
	if held != 0 {
		t.Fatalf("the runner still holds %d runs", held)
	}
}
