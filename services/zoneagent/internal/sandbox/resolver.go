package sandbox

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"tori.dev/pkg/netguard"
)

// The sandbox's resolver is the zone's own: a DNS relay the agent runs on a loopback port
// of the host, which every app sees as 127.0.0.1:53 in its namespace (pasta carries that one
// port, as it carries the pooler's) and names in its /etc/resolv.conf. An app's sockets never
// reach the host's resolvers themselves: the firewall opens no port 53 anywhere, so a
// resolver on a private address of the host's network is not a way in. The relay passes on
// standard queries only and answers with public addresses only (pkg/netguard's rule, the one
// the firewall keeps): a private resolver tells an app nothing of the host's network.

// ErrResolverRefused is a query the relay does not pass on.
var ErrResolverRefused = errors.New("not a standard query")

// maxResolverQueries bounds the relay's queries in flight, all apps together: past it a
// query is answered SERVFAIL at once rather than held (the agent's sockets and memory are
// the zone's, not one app's).
const maxResolverQueries = 256

// resolverTimeout is how long the relay waits for an upstream answer.
const resolverTimeout = 3 * time.Second

// Resolver is the zone's DNS relay for the sandboxes.
type Resolver struct {
	// Upstreams are the resolvers asked (host:port), in order: ZONE_SANDBOX_RESOLVERS, or
	// the host's /etc/resolv.conf.
	Upstreams []string
	// Port is where it listens on the host's 127.0.0.1, UDP and TCP alike.
	Port int

	udp, tcp *dns.Server
	slots    chan struct{}
}

// StartResolver listens on a free loopback port (UDP and TCP on the same number) and
// relays to upstreams. With no upstream it still answers, SERVFAIL, so a lookup fails at
// once instead of waiting.
func StartResolver(upstreams []string) (*Resolver, error) {
	r := &Resolver{Upstreams: upstreams, slots: make(chan struct{}, maxResolverQueries)}
	pc, ln, port, err := loopbackPair()
	if err != nil {
		return nil, err
	}
	r.Port = port
	r.udp = &dns.Server{PacketConn: pc, Handler: r}
	r.tcp = &dns.Server{Listener: ln, Handler: r, ReadTimeout: resolverTimeout, WriteTimeout: resolverTimeout}
	serve(r.udp)
	serve(r.tcp)
	return r, nil
}

// serve starts srv and returns once it serves (a Shutdown before then would not stop it).
func serve(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
}

// loopbackPair listens on one free port of 127.0.0.1 for UDP and TCP both.
func loopbackPair() (net.PacketConn, net.Listener, int, error) {
	for range 20 {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return nil, nil, 0, err
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		if ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			return pc, ln, port, nil
		}
		pc.Close() // that TCP port is taken: another pair
	}
	return nil, nil, 0, errors.New("resolver: no loopback port free for both UDP and TCP")
}

// Close stops the relay.
func (r *Resolver) Close() {
	if r != nil {
		r.udp.Shutdown()
		r.tcp.Shutdown()
	}
}

// ServeDNS answers one query from an app.
func (r *Resolver) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	default:
		w.WriteMsg(new(dns.Msg).SetRcode(q, dns.RcodeServerFailure))
		return
	}
	network := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		network = "tcp"
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolverTimeout)
	defer cancel()
	w.WriteMsg(r.answer(ctx, network, q))
}

// answer is the relay's reply to q: refused unless a standard query of one question, else
// the first upstream's answer with non-public addresses taken out.
func (r *Resolver) answer(ctx context.Context, network string, q *dns.Msg) *dns.Msg {
	if err := checkQuery(q); err != nil {
		return new(dns.Msg).SetRcode(q, dns.RcodeRefused)
	}
	c := &dns.Client{Net: network, Timeout: resolverTimeout}
	for _, up := range r.Upstreams {
		in, _, err := c.ExchangeContext(ctx, q, up)
		if err != nil || in == nil {
			continue
		}
		return publicOnly(in) // truncated stays truncated: the app asks again over TCP

	}
	return new(dns.Msg).SetRcode(q, dns.RcodeServerFailure)
}

// checkQuery accepts a standard query (not a response, an update or a notify) of one
// question, as every stub resolver sends.
func checkQuery(q *dns.Msg) error {
	if q.Response || q.Opcode != dns.OpcodeQuery || len(q.Question) != 1 || len(q.Answer) > 0 || len(q.Ns) > 0 {
		return ErrResolverRefused
	}
	return nil
}

// publicOnly drops every A and AAAA record of m whose address is not public (netguard), in
// each section: what the app could not reach, it is not told of either.
func publicOnly(m *dns.Msg) *dns.Msg {
	keep := func(rrs []dns.RR) []dns.RR {
		out := rrs[:0]
		for _, rr := range rrs {
			var ip net.IP
			switch v := rr.(type) {
			case *dns.A:
				ip = v.A
			case *dns.AAAA:
				ip = v.AAAA
			default:
				out = append(out, rr)
				continue
			}
			if a, ok := netip.AddrFromSlice(ip); ok && netguard.Check(a) == nil {
				out = append(out, rr)
			}
		}
		return out
	}
	m.Answer, m.Ns, m.Extra = keep(m.Answer), keep(m.Ns), keep(m.Extra)
	return m
}

// resolvConf is the sandbox's /etc/resolv.conf: the zone's relay, as the app reaches it.
const resolvConf = "# The zone's resolver (Tori): public answers only.\nnameserver 127.0.0.1\noptions edns0\n"

// resolvConfFile is the sandbox's /etc/resolv.conf for bubblewrap's --ro-bind-data: an
// anonymous memory file, like the arguments' (bwrapArgsFile).
func resolvConfFile() (*os.File, error) {
	return memFile("tori-sandbox-resolv", []byte(resolvConf))
}

// hostUpstreams are the nameservers of the host's resolv.conf as the relay asks them
// (host:53), loopback ones included: the relay is the zone's own process on the host.
func hostUpstreams(resolvConf string) []string {
	reachable, loopback := HostResolvers(resolvConf)
	var out []string
	for _, a := range append(reachable, loopback...) {
		out = append(out, netip.AddrPortFrom(a, 53).String())
	}
	return out
}
