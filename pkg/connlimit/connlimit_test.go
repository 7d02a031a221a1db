package connlimit

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
)

// recordingConn is a net.Conn whose writes are recorded, with or without its own ReadFrom.
type recordingConn struct {
	net.Conn
	writes    int
	readFroms int
	got       bytes.Buffer
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.got.Write(p)
}

type readerFromConn struct{ *recordingConn }

func (c readerFromConn) ReadFrom(r io.Reader) (int64, error) {
	c.readFroms++
	return c.got.ReadFrom(r)
}

// A body streamed through a server's bufio.Writer reaches the connection's own ReadFrom
// after the headers, instead of one write per buffer's worth; without one, it is still
// written whole.
func TestAStreamedBodyReachesTheConnectionsReadFrom(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 120<<10)
	stream := func(conn net.Conn) {
		w := bufio.NewWriterSize(&countedConn{Conn: conn, release: func() {}}, 4096)
		_, _ = w.WriteString("HTTP/1.1 200 OK\r\n\r\n")
		if _, err := w.ReadFrom(struct{ io.Reader }{bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	rec := &recordingConn{}
	stream(readerFromConn{rec})
	if rec.readFroms != 1 || rec.writes > 2 {
		t.Fatalf("ReadFrom called %d times, %d writes: want the body handed over once", rec.readFroms, rec.writes)
	}
	if rec.got.Len() != len(body)+len("HTTP/1.1 200 OK\r\n\r\n") {
		t.Fatalf("%d bytes written", rec.got.Len())
	}

	plain := &recordingConn{}
	stream(plain)
	if plain.got.Len() != len(body)+len("HTTP/1.1 200 OK\r\n\r\n") {
		t.Fatalf("without ReadFrom below: %d bytes written", plain.got.Len())
	}
}
