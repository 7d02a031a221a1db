// Package mailtest is a tiny in-process SMTP server for tests: it accepts every message and
// keeps it for the test to read. It speaks just enough of RFC 5321 for net/smtp.
package mailtest

import (
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// Received is one delivered message.
type Received struct {
	From string
	To   []string
	Data string // headers and body, dot-unstuffed, with LF line ends (textproto strips the CRs)
}

// Server is a running test SMTP server.
type Server struct {
	Addr string

	mu   sync.Mutex
	msgs []Received
	ln   net.Listener
}

// NewServer listens on a free loopback port until the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln}
	go s.accept()
	t.Cleanup(func() { ln.Close() })
	return s
}

// URL is the SMTP_URL naming this server.
func (s *Server) URL() string { return "smtp://" + s.Addr }

// Messages returns what was delivered so far.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// Wait returns the delivered messages once there are at least n, or fails the test.
func (s *Server) Wait(t testing.TB, n int) []Received {
	t.Helper()
	var m []Received
	testinfra.Eventually(t, 10*time.Second, fmt.Sprintf("mailtest: %d messages", n), func() bool {
		m = s.Messages()
		return len(m) >= n
	})
	return m
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serve(c)
	}
}

func (s *Server) serve(nc net.Conn) {
	defer nc.Close()
	c := textproto.NewConn(nc)
	_ = c.PrintfLine("220 mailtest ESMTP")
	var cur Received
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO":
			_ = c.PrintfLine("250-mailtest")
			_ = c.PrintfLine("250 8BITMIME")
		case "HELO", "NOOP":
			_ = c.PrintfLine("250 ok")
		case "RSET":
			cur = Received{}
			_ = c.PrintfLine("250 ok")
		case "MAIL":
			cur = Received{From: addrOf(line)}
			_ = c.PrintfLine("250 ok")
		case "RCPT":
			cur.To = append(cur.To, addrOf(line))
			_ = c.PrintfLine("250 ok")
		case "DATA":
			_ = c.PrintfLine("354 go ahead")
			b, err := c.ReadDotBytes()
			if err != nil {
				return
			}
			cur.Data = string(b)
			s.mu.Lock()
			s.msgs = append(s.msgs, cur)
			s.mu.Unlock()
			cur = Received{}
			_ = c.PrintfLine("250 queued")
		case "QUIT":
			_ = c.PrintfLine("221 bye")
			return
		default:
			_ = c.PrintfLine("502 not implemented")
		}
	}
}

// addrOf takes the address out of "MAIL FROM:<a@b>" or "RCPT TO:<a@b>".
func addrOf(line string) string {
	i, j := strings.IndexByte(line, '<'), strings.IndexByte(line, '>')
	if i < 0 || j < i {
		return ""
	}
	return line[i+1 : j]
}
