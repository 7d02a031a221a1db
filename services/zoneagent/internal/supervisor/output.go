package supervisor

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// LogSink receives customer output, already redacted, one line at a time.
type LogSink interface {
	Line(appID, deployID, stream, message string, redactions int)
}

// maxLine bounds one log line; longer output is cut into several.
const maxLine = 8 << 10

// lineWriter splits a process's output into lines, redacts them and hands them to a sink.
type lineWriter struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	sink     LogSink
	redactor *Redactor
	appID    string
	deployID string
	stream   string
	// process is the instance the output is of (cron.<job>.<run>); "" for builds and
	// release Jobs. See output_process.go.
	process string
	bound   *lineBound
}

func newLineWriter(sink LogSink, r *Redactor, appID, deployID, stream string) *lineWriter {
	return &lineWriter{sink: sink, redactor: r, appID: appID, deployID: deployID, stream: stream}
}

// Output carries customer output to the sink: cut into lines, redacted, and within each
// app's bound of lines a second (its build, release and processes together).
type Output struct {
	Sink LogSink
	// LinesPerSecond bounds each app's output; 0 leaves it unbounded.
	LinesPerSecond int

	mu     sync.Mutex
	bounds map[string]*lineBound
}

// writer is a writer of the app's output to stream, within the app's output bound.
func (o *Output) writer(r *Redactor, appID, deployID, stream string) *lineWriter {
	w := newLineWriter(o.Sink, r, appID, deployID, stream)
	w.bound = o.bound(appID)
	return w
}

// bound is the app's shared bound.
func (o *Output) bound(appID string) *lineBound {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bounds == nil {
		o.bounds = map[string]*lineBound{}
	}
	b := o.bounds[appID]
	if b == nil {
		b = &lineBound{perSecond: o.LinesPerSecond}
		o.bounds[appID] = b
	}
	return b
}

// forget drops a deleted app's bound.
func (o *Output) forget(appID string) {
	o.mu.Lock()
	delete(o.bounds, appID)
	o.mu.Unlock()
}

// system writes a line of the platform's own to the app's log, outside its bound.
func (o *Output) system(appID, deployID, message string) {
	if o.Sink != nil {
		o.Sink.Line(appID, deployID, "system", message, 0)
	}
}

// lineBound lets an app's output through at up to perSecond lines a second; past it lines
// are dropped and counted, and the count goes out as a `system` line once the next second
// lets lines through again (or when the output ends).
type lineBound struct {
	mu        sync.Mutex
	now       func() time.Time // the clock seconds are counted by; nil is time.Now
	perSecond int
	second    int64
	used      int
	dropped   int
}

// admit reports whether a line may go out, and how many were dropped before it that the
// caller must now report.
func (b *lineBound) admit(now time.Time) (ok bool, dropped int) {
	if b == nil || b.perSecond <= 0 {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := now.Unix(); s != b.second {
		b.second, b.used = s, 0
	}
	if b.used >= b.perSecond {
		b.dropped++
		return false, 0
	}
	b.used++
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

func (b *lineBound) clock() time.Time {
	if b == nil || b.now == nil {
		return time.Now()
	}
	return b.now()
}

// flush hands back the count not reported yet.
func (b *lineBound) flush() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dropped
	b.dropped = 0
	return d
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		b := w.buf.Bytes()
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(b) >= maxLine {
				w.emit(string(b[:maxLine]))
				w.buf.Next(maxLine)
				continue
			}
			return len(p), nil
		}
		w.emit(string(b[:i]))
		w.buf.Next(i + 1)
	}
}

// Flush emits a last line without a newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.emit(w.buf.String())
		w.buf.Reset()
	}
	w.reportDropped(w.bound.flush())
}

func (w *lineWriter) reportDropped(n int) {
	if n > 0 && w.sink != nil {
		w.send("system", fmt.Sprintf("%d lines of output dropped: over this app's bound of %d lines a second", n, w.bound.perSecond), 0)
	}
}

func (w *lineWriter) emit(line string) {
	if w.sink == nil {
		return
	}
	ok, dropped := w.bound.admit(w.bound.clock())
	w.reportDropped(dropped)
	if !ok {
		return
	}
	line = string(bytes.TrimRight([]byte(line), "\r"))
	msg, n := w.redactor.Redact(line)
	w.send(w.stream, msg, n)
}
