// Package connlimit bounds how many connections one client address holds open at a server,
// so a single peer cannot exhaust its sockets.
package connlimit

import (
	"io"
	"net"
	"sync"
	"time"
)

// PerIP wraps ln so that at most max connections from one peer address are open at once;
// max <= 0 leaves ln as it is. A connection past the bound is answered a bare HTTP 429 and
// closed at once, without reaching the server. Unlike fasthttp's MaxConnsPerIP it counts
// IPv6 peers too, and a closed connection stays safe to touch.
func PerIP(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perIPListener{Listener: ln, max: max, open: map[string]int{}}
}

type perIPListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

const refusal = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 30\r\nConnection: close\r\n\r\ntoo many connections from you\n"

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := peerIP(c)
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.mu.Unlock()
			// Never blocks Accept for long: a peer that does not read its refusal loses it.
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write([]byte(refusal))
			_ = c.Close()
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
	}
}

func (l *perIPListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

func peerIP(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ReadFrom hands a streamed body to the connection's own io.ReaderFrom (a *net.TCPConn copies
// in 32 KiB writes, or splices). Without it the server's bufio.Writer.ReadFrom sees no
// ReaderFrom below and fills and flushes its 4 KiB buffer instead: a write syscall for every
// 4 KiB of a proxied answer (31 for a 120 KiB log page, profiled under logs-bench).
func (c *countedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides every method but Write, so io.Copy cannot loop back into ReadFrom.
type writerOnly struct{ io.Writer }
