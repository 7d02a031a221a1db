package busapi

import "testing"

// A line of an instance carries its process; a build's or release's carries none.
func TestLogLinesCarryTheirProcess(t *testing.T) {
	l := NewLogs(nil, nil)
	l.Line("app", "deploy", "build", "compiling", 0)
	l.ProcessLine("app", "deploy", "cron.nightly.run1", "stdout", "hello", 1)
	if len(l.pending) != 2 {
		t.Fatalf("pending %d", len(l.pending))
	}
	if p := l.pending[0].GetProcess(); p != "" {
		t.Fatalf("build line process %q", p)
	}
	e := l.pending[1]
	if e.GetProcess() != "cron.nightly.run1" || e.GetStream() != "stdout" || e.GetMessage() != "hello" || e.GetRedactions() != 1 {
		t.Fatalf("instance line %v", e)
	}
}
