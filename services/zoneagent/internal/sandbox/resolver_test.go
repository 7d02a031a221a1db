package sandbox

import (
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/miekg/dns"
)

// fakeUpstream is a DNS server on loopback that answers every A question with addrs.
func fakeUpstream(t *testing.T, addrs map[string][]string) string {
	t.Helper()
	pc, ln, port, err := loopbackPair()
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg).SetReply(q)
		for _, a := range addrs[q.Question[0].Name] {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(a)})
		}
		m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"kept"}})
		w.WriteMsg(m)
	})
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		serve(srv)
		t.Cleanup(func() { srv.Shutdown() })
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// The zone's resolver passes standard queries on and hands back public addresses only, over
// UDP and TCP; anything but a query of one question is refused; without an upstream it
// fails at once.
func TestZoneResolver(t *testing.T) {
	up := fakeUpstream(t, map[string][]string{
		"public.tori.test.":  {"203.0.113.7"},
		"private.tori.test.": {"10.255.255.53", "127.0.0.1", "169.254.169.254", "203.0.113.8"},
	})
	r, err := StartResolver([]string{"127.0.0.1:1", up}) // the first never answers: the next is asked
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	at := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port))
	ask := func(network string, m *dns.Msg) *dns.Msg {
		t.Helper()
		in, _, err := (&dns.Client{Net: network}).Exchange(m, at)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		return in
	}
	answers := func(m *dns.Msg) (a []string, other int) {
		for _, rr := range m.Answer {
			if v, ok := rr.(*dns.A); ok {
				a = append(a, v.A.String())
			} else {
				other++
			}
		}
		return a, other
	}
	for _, network := range []string{"udp", "tcp"} {
		in := ask(network, new(dns.Msg).SetQuestion("public.tori.test.", dns.TypeA))
		if a, other := answers(in); in.Rcode != dns.RcodeSuccess || len(a) != 1 || a[0] != "203.0.113.7" || other != 1 {
			t.Errorf("%s public name: %v", network, in)
		}
		in = ask(network, new(dns.Msg).SetQuestion("private.tori.test.", dns.TypeA))
		if a, _ := answers(in); len(a) != 1 || a[0] != "203.0.113.8" {
			t.Errorf("%s: the private addresses reach the app: %v", network, a)
		}
	}
	update := new(dns.Msg).SetUpdate("tori.test.")
	// The server's own check (not implemented) or the relay's (refused): never passed on.
	if in := ask("udp", update); in.Rcode != dns.RcodeRefused && in.Rcode != dns.RcodeNotImplemented {
		t.Errorf("an update: rcode %d, want refused", in.Rcode)
	}
	reply := new(dns.Msg).SetQuestion("public.tori.test.", dns.TypeA)
	reply.Response = true
	if !errors.Is(checkQuery(reply), ErrResolverRefused) {
		t.Error("a response passed as a query")
	}

	none, err := StartResolver(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	in, _, err := new(dns.Client).Exchange(new(dns.Msg).SetQuestion("public.tori.test.", dns.TypeA), net.JoinHostPort("127.0.0.1", strconv.Itoa(none.Port)))
	if err != nil || in.Rcode != dns.RcodeServerFailure {
		t.Errorf("without an upstream: %v %v", in, err)
	}
}
