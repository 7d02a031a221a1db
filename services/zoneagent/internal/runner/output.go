package runner

import (
	"bytes"
	"sync"
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
}

func newLineWriter(sink LogSink, r *Redactor, appID, deployID, stream string) *lineWriter {
	return &lineWriter{sink: sink, redactor: r, appID: appID, deployID: deployID, stream: stream}
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
}

func (w *lineWriter) emit(line string) {
	if w.sink == nil {
		return
	}
	line = string(bytes.TrimRight([]byte(line), "\r"))
	msg, n := w.redactor.Redact(line)
	w.sink.Line(w.appID, w.deployID, w.stream, msg, n)
}
