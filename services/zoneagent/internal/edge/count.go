package edge

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Counter counts the requests the edge answers for an app (internal/edgecount), keyed by
// the app's id: the customer's request metrics.
type Counter interface {
	Observe(appID string, status int, elapsed time.Duration, end time.Time)
}

// counting is the one place a request is counted: Edge.ServeHTTP wraps the writer of every
// request for an app's host (static, proxied, 404, 503 alike) once it is routed, and counts
// it when the handler returns. The HTTPS redirect, ACME challenges and anything not routed
// to an app never get here.
func (e *Edge) counting(w http.ResponseWriter) (*statusWriter, time.Duration) {
	sw := statusWriters.Get().(*statusWriter)
	sw.ResponseWriter, sw.status = w, 0
	return sw, time.Since(clockBase)
}

// counted counts the request counting started. The handler has returned: net/http uses no
// writer of a request after that, so the wrapper goes back to the pool.
func (e *Edge) counted(appID string, sw *statusWriter, start time.Duration) {
	end := time.Since(clockBase)
	e.Counts.Observe(appID, sw.statusOr200(), end-start, clockBase.Add(end))
	sw.ResponseWriter = nil
	statusWriters.Put(sw)
}

// statusWriters are reused: one per request in flight, not one allocated per request.
var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// clockBase anchors the request clock: a request's start and end are read as the time since
// it on the monotonic clock alone, which costs half a time.Now (that reads the wall clock
// too: on this project's machine two of them were most of counting's cost). The minute a
// request ends in is clockBase plus that, so the edge's minutes follow the clock it started
// with; Now reads the same clock for whoever collects the counts.
var clockBase = time.Now()

// Now is the request clock's time now (see clockBase).
func Now() time.Time { return clockBase.Add(time.Since(clockBase)) }

// statusWriter remembers the status of the answer. It keeps what the edge's handlers use of
// the writer beneath: Flush (streamed answers), ReadFrom (sendfile for cached files),
// Hijack (an upgrade through the proxy, counted as 101) and Unwrap (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	// 1xx before the final answer (100 Continue, 103 Early Hints) are not the answer;
	// 101 ends the exchange as an upgrade.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{w.ResponseWriter}, r)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusOr200 is the answer's status: a handler that wrote nothing answered 200.
func (w *statusWriter) statusOr200() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// writerOnly hides a writer's ReadFrom, so io.Copy does not call back into it.
type writerOnly struct{ io.Writer }
