package apptest

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// DNS is an authoritative-for-everything DNS server of the test's own, on a free UDP port,
// answering TXT questions from records the test sets. The service under test reaches it
// through DNS_RESOLVER, exactly as it would reach an operator's resolver.
type DNS struct {
	Addr string
	mu   sync.Mutex
	txt  map[string][]string
}

// StartDNS starts the server; it stops when the test ends.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{Addr: pc.LocalAddr().String(), txt: map[string][]string{}}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.answer), NotifyStartedFunc: func() { close(started) }}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

// SetTXT replaces the TXT records of name.
func (d *DNS) SetTXT(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt[dns.Fqdn(strings.ToLower(name))] = values
}

// RemoveTXT deletes name: it no longer exists (NXDOMAIN).
func (d *DNS) RemoveTXT(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.txt, dns.Fqdn(strings.ToLower(name)))
}

func (d *DNS) answer(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range req.Question {
		values, ok := d.txt[strings.ToLower(q.Name)]
		if !ok {
			m.Rcode = dns.RcodeNameError
			continue
		}
		if q.Qtype != dns.TypeTXT {
			continue
		}
		for _, v := range values {
			m.Answer = append(m.Answer, &dns.TXT{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 1},
				Txt: []string{v},
			})
		}
	}
	w.WriteMsg(m)
}

// Resolver asks only this server, as the service does with DNS_RESOLVER set.
func (d *DNS) Resolver() *net.Resolver {
	dialer := net.Dialer{Timeout: 3 * time.Second}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, d.Addr)
		},
	}
}
