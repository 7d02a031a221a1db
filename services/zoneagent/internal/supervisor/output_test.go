package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// clock is a settable time for the output bound.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// lines is what the sink got for one stream.
func (s *sink) stream(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		if m, ok := strings.CutPrefix(l, name+": "); ok {
			out = append(out, m)
		}
	}
	return out
}

// An app's output is bounded per second across its streams (build, release, stdout and
// stderr share one bound): past it lines are dropped, and once lines pass again (or the
// output ends) a `system` line counts the dropped ones. Another app has its own bound.
func TestOutputBoundDropsAndCounts(t *testing.T) {
	s := &sink{}
	o := &Output{Sink: s, LinesPerSecond: 3}
	c := &clock{t: time.Unix(1_000_000, 0)}
	o.bound("app-a").now = c.now
	o.bound("app-b").now = c.now
	out := o.writer(&Redactor{}, "app-a", "d1", "stdout")
	errw := o.writer(&Redactor{}, "app-a", "d1", "stderr")
	other := o.writer(&Redactor{}, "app-b", "d2", "stdout")

	// Second 1: 2 lines on stdout and 5 on stderr; 3 pass, 4 are dropped.
	fmt.Fprint(out, "o1\no2\n")
	fmt.Fprint(errw, "e1\ne2\ne3\ne4\ne5\n")
	fmt.Fprint(other, "b1\nb2\nb3\n") // app-b's own bound: all pass
	if got, want := strings.Join(s.stream("stdout"), ","), "o1,o2,b1,b2,b3"; got != want {
		t.Errorf("stdout in second 1: %s, want %s", got, want)
	}
	if got := strings.Join(s.stream("stderr"), ","); got != "e1" {
		t.Errorf("stderr in second 1: %s, want e1 only", got)
	}
	if sys := s.stream("system"); len(sys) != 0 {
		t.Errorf("a count before the second is over: %v", sys)
	}

	// Second 2: the first line that passes reports the 4 dropped before it.
	c.add(time.Second)
	fmt.Fprint(out, "o3\n")
	sys := s.stream("system")
	if len(sys) != 1 || sys[0] != "4 lines of output dropped: over this app's bound of 3 lines a second" {
		t.Fatalf("system lines: %q", sys)
	}
	if got := s.stream("stdout"); got[len(got)-1] != "o3" {
		t.Errorf("after the count: %v", got)
	}

	// Dropped at the end of the output: the final flush counts them.
	fmt.Fprint(out, "o4\no5\no6\no7\n")
	out.Flush()
	sys = s.stream("system")
	if len(sys) != 2 || !strings.HasPrefix(sys[1], "2 lines of output dropped") {
		t.Fatalf("system lines after the flush: %q", sys)
	}
	// Nothing left to count: a second flush says nothing.
	errw.Flush()
	if n := len(s.stream("system")); n != 2 {
		t.Errorf("a second count of the same lines: %d system lines", n)
	}
}

// Unbounded (0) lets every line through.
func TestOutputBoundZeroIsUnbounded(t *testing.T) {
	s := &sink{}
	o := &Output{Sink: s}
	w := o.writer(&Redactor{}, "app", "d", "stdout")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(w, "%d\n", i)
	}
	w.Flush()
	if n := len(s.stream("stdout")); n != 5000 {
		t.Fatalf("%d of 5000 lines", n)
	}
}

// A real sandboxed process that floods its output: what reaches the log plus what the
// `system` lines count is exactly what it printed, and the log holds at most the bound for
// each second the flood lasted.
func TestSandboxedFloodIsBounded(t *testing.T) {
	const total, perSecond = 20000, 200
	r := newRig(t)
	r.l.Source.Output.LinesPerSecond = perSecond
	app := uuid.NewString()
	ctx := context.Background()
	if err := r.l.Identities.Ensure(ctx, app); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.l.Identities.AppsDir, app) // reachable by the app's uid; t.TempDir() is not
	os.Mkdir(dir, 0o700)
	cred := r.l.Source.Sandbox.Credential(app)
	os.Chown(dir, int(cred.Uid), int(cred.Gid))
	t.Cleanup(func() { r.l.Source.Sandbox.Cgroups.Remove(app) })

	out := r.l.Source.Output.writer(&Redactor{}, app, "d", "stdout")
	t0 := time.Now()
	sb, err := r.l.Source.Sandbox.Start(ctx, sandbox.Spec{AppID: app, Dir: dir, Env: sandbox.Environ(nil, 0), Stdout: out, Stderr: out,
		Argv: []string{"/bin/sh", "-c", "seq 1 " + strconv.Itoa(total)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, r.sink.all())
	}
	if err := sb.Wait(); err != nil {
		t.Fatal(err)
	}
	out.Flush()
	seconds := int(time.Since(t0)/time.Second) + 2 // the flood may straddle second boundaries
	passed := len(r.sink.stream("stdout"))
	dropped := 0
	re := regexp.MustCompile(`^(\d+) lines of output dropped: over this app's bound of 200 lines a second$`)
	for _, l := range r.sink.stream("system") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected system line %q", l)
		}
		n, _ := strconv.Atoi(m[1])
		dropped += n
	}
	if passed+dropped != total {
		t.Errorf("%d passed + %d dropped != %d printed", passed, dropped, total)
	}
	if passed > perSecond*seconds || dropped == 0 {
		t.Errorf("%d lines passed in about %d s (bound %d a second), %d dropped", passed, seconds, perSecond, dropped)
	}
}
