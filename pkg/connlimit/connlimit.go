// Package connlimit bounds how many connections one client address holds open at a server,
// so a single peer cannot exhaust its sockets.
package connlimit

import (
	"io"
	"net"
	"net/netip"
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

// peerIP is the peer's address, or its /64 for IPv6: one customer's network is usually
// handed a whole /64, so counting per /128 would give it unlimited connections.
func peerIP(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a = a.Unmap(); a.Is6() {
			return netip.PrefixFrom(a, 64).Masked().String()
		}
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

// ReadFrom copies a streamed body straight to the connection in writes of up to 32 KiB. The
// server's bufio.Writer.ReadFrom hands a body to the connection's ReadFrom when it has one;
// without this method it would fill and flush its 4 KiB buffer instead, a write syscall for
// every 4 KiB of a proxied answer (31 for a 120 KiB log page, profiled under logs-bench).
// The buffer is pooled: *net.TCPConn's own ReadFrom would allocate 32 KiB per answer here,
// since a proxied body is neither a file nor a socket it could splice.
func (c *countedConn) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	return io.CopyBuffer(writerOnly{c.Conn}, r, *buf)
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writerOnly hides every method but Write, so io.CopyBuffer cannot loop back into ReadFrom.
type writerOnly struct{ io.Writer }
