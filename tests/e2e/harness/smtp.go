package harness

import (
	"bufio"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mail is one message the SMTP server received.
type Mail struct {
	From string
	To   []string
	Data string
}

// SMTPServer is a minimal SMTP receiver for tests: it accepts every message and keeps it.
type SMTPServer struct {
	ln   net.Listener
	mu   sync.Mutex
	cond *sync.Cond
	mail []Mail
}

// NewSMTPServer listens on a free loopback port until the test ends.
func NewSMTPServer(t testing.TB) *SMTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp listen: %v", err)
	}
	s := &SMTPServer{ln: ln}
	s.cond = sync.NewCond(&s.mu)
	go s.serve()
	t.Cleanup(func() { ln.Close() })
	return s
}

// URL is the server's smtp:// address, as SMTP_URL takes it.
func (s *SMTPServer) URL() string { return "smtp://" + s.ln.Addr().String() }

// WaitFor waits up to timeout until more than `after` mails have reached rcpt, and returns
// the newest of them.
func (s *SMTPServer) WaitFor(rcpt string, after int, timeout time.Duration) (Mail, bool) {
	deadline := time.Now().Add(timeout)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var newest *Mail
		seen := 0
		for i := range s.mail {
			for _, to := range s.mail[i].To {
				if strings.EqualFold(to, rcpt) {
					seen++
					newest = &s.mail[i]
				}
			}
		}
		if seen > after {
			return *newest, true
		}
		if time.Now().After(deadline) {
			return Mail{}, false
		}
		go func() { time.Sleep(20 * time.Millisecond); s.cond.Broadcast() }()
		s.cond.Wait()
	}
}

// Count is how many mails reached rcpt.
func (s *SMTPServer) Count(rcpt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.mail {
		for _, to := range m.To {
			if strings.EqualFold(to, rcpt) {
				n++
			}
		}
	}
	return n
}

func (s *SMTPServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.session(c)
	}
}

func (s *SMTPServer) session(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	tp := textproto.NewConn(c)
	reply := func(code int, msg string) { tp.PrintfLine("%d %s", code, msg) }
	reply(220, "tori-test ESMTP")
	var cur Mail
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO", "HELO":
			reply(250, "tori-test")
		case "MAIL":
			cur = Mail{From: addrOf(line)}
			reply(250, "ok")
		case "RCPT":
			cur.To = append(cur.To, addrOf(line))
			reply(250, "ok")
		case "DATA":
			reply(354, "go ahead")
			r := bufio.NewReader(tp.DotReader())
			var b strings.Builder
			if _, err := r.WriteTo(&b); err != nil {
				return
			}
			cur.Data = b.String()
			s.mu.Lock()
			s.mail = append(s.mail, cur)
			s.mu.Unlock()
			s.cond.Broadcast()
			reply(250, "queued")
		case "RSET":
			cur = Mail{}
			reply(250, "ok")
		case "NOOP":
			reply(250, "ok")
		case "QUIT":
			reply(221, "bye")
			return
		default:
			reply(502, fmt.Sprintf("%s not implemented", verb))
		}
	}
}

func addrOf(line string) string {
	i, j := strings.Index(line, "<"), strings.LastIndex(line, ">")
	if i < 0 || j < i {
		return ""
	}
	return line[i+1 : j]
}
