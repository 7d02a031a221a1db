package connlimit

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"
)

// recordingConn is a net.Conn whose writes are recorded.
type recordingConn struct {
	net.Conn
	writes int
	got    bytes.Buffer
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.got.Write(p)
}

// A body streamed through a server's bufio.Writer with a 4 KiB buffer (fasthttp's) reaches the
// connection in writes of 32 KiB, not one per 4 KiB, and whole.
func TestAStreamedBodyIsWrittenInLargeWrites(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 120<<10)
	head := "HTTP/1.1 200 OK\r\n\r\n"
	rec := &recordingConn{}
	w := bufio.NewWriterSize(&countedConn{Conn: rec, release: func() {}}, 4096)
	_, _ = w.WriteString(head)
	if _, err := w.ReadFrom(struct{ io.Reader }{bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.got.String() != head+string(body) {
		t.Fatalf("%d bytes written, want %d", rec.got.Len(), len(head)+len(body))
	}
	// The head in one write, then the body in 32 KiB pieces: 1 + 4 for 120 KiB.
	if rec.writes > 6 {
		t.Fatalf("%d writes for 120 KiB", rec.writes)
	}
}

// Streaming an answer allocates no copy buffer per answer (a fresh 32 KiB each would be
// 3.2 MB over these 100).
func TestStreamingAllocatesNoCopyBufferPerAnswer(t *testing.T) {
	rec := &recordingConn{}
	c := &countedConn{Conn: rec, release: func() {}}
	body := bytes.Repeat([]byte("x"), 8<<10)
	stream := func() {
		rec.got.Reset()
		_, _ = c.ReadFrom(struct{ io.Reader }{bytes.NewReader(body)})
	}
	stream() // the pool's first buffer, and rec's
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		stream()
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 400<<10 {
		t.Fatalf("%d bytes allocated streaming 100 answers", n)
	}
}
