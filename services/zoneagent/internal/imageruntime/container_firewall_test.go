package imageruntime

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"tori.dev/services/zoneagent/internal/netlab"
)

// netnsLab is a set of network namespaces the test makes itself, removed when it ends.
type netnsLab struct {
	t      *testing.T
	suffix string
}

func newNetnsLab(t *testing.T) *netnsLab {
	return &netnsLab{t: t, suffix: strconv.Itoa(rand.IntN(1 << 20))}
}

// ns makes namespace <label>, with its loopback up, and returns its name.
func (l *netnsLab) ns(label string) string {
	name := "tori-cf-" + label + "-" + l.suffix
	netlab.IP(l.t, "netns", "add", name)
	l.t.Cleanup(func() { exec.Command("ip", "netns", "delete", name).Run() })
	netlab.IP(l.t, "-n", name, "link", "set", "lo", "up")
	return name
}

// link joins namespace a (interface aIf, address aIP) and b (bIf, bIP) by a veth pair.
func (l *netnsLab) link(a, aIf, aIP, b, bIf, bIP string, prefix int) {
	netlab.IP(l.t, "-n", a, "link", "add", aIf, "type", "veth", "peer", "name", bIf, "netns", b)
	netlab.IP(l.t, "-n", a, "addr", "add", fmt.Sprintf("%s/%d", aIP, prefix), "dev", aIf)
	netlab.IP(l.t, "-n", b, "addr", "add", fmt.Sprintf("%s/%d", bIP, prefix), "dev", bIf)
	netlab.IP(l.t, "-n", a, "link", "set", aIf, "up")
	netlab.IP(l.t, "-n", b, "link", "set", bIf, "up")
}

// serve runs the netlab.Banner server in namespace ns on port, answering with name.
func (l *netnsLab) serve(ns, name string, port int) {
	l.t.Helper()
	srv := exec.Command("ip", "netns", "exec", ns, "/usr/bin/python3", "-c", netlab.Banner, name, strconv.Itoa(port))
	out, err := srv.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		l.t.Fatalf("server %s in %s did not start: %q", name, ns, line)
	}
}

// probeFrom connects from namespace ns to each address and returns what each answered
// ("refused: …" when it did not).
func (l *netnsLab) probeFrom(ns string, addrs []string) map[string]string {
	l.t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "/usr/bin/python3", "-c", netlab.Probe}, addrs...)...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("probe: %v: %s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		addr, rest, _ := strings.Cut(line, " ")
		got[addr] = rest
	}
	return got
}

// A zone host that forwards image containers' traffic, made of namespaces: "zone" stands
// for the host (forwarding on, the rules loaded in it), "app1" and "app2" for two apps'
// containers behind their bridges (tc-…, as the engine names them for the zone), a
// private host 10.200.x (with a link-local and a CGNAT address), a stand-in internet host
// 203.0.113.x, and a service of the host itself on every address. Before the rules every
// target answers app1 (the control: forwarding works); with ContainerFirewall loaded only
// the internet does, and the host still reaches the container (the edge's way in).
func TestContainerFirewallRefusesForwardedTraffic(t *testing.T) {
	lab := newNetnsLab(t)
	n := rand.IntN(60) + 1
	zone, app1, app2, private, inet := lab.ns("zone"), lab.ns("app1"), lab.ns("app2"), lab.ns("private"), lab.ns("inet")
	netlab.IP(t, "netns", "exec", zone, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
	bridge1, bridge2 := AppNetworkOf(uuid.NewString()).Bridge, AppNetworkOf(uuid.NewString()).Bridge
	lab.link(zone, bridge1, fmt.Sprintf("10.88.%d.1", n), app1, "eth0", fmt.Sprintf("10.88.%d.2", n), 30)
	lab.link(zone, bridge2, fmt.Sprintf("10.89.%d.1", n), app2, "eth0", fmt.Sprintf("10.89.%d.2", n), 30)
	lab.link(zone, "tzp"+lab.suffix, fmt.Sprintf("10.200.%d.1", n), private, "eth0", fmt.Sprintf("10.200.%d.2", n), 30)
	lab.link(zone, "tzi"+lab.suffix, fmt.Sprintf("203.0.113.%d", 4*n+1), inet, "eth0", fmt.Sprintf("203.0.113.%d", 4*n+2), 30)
	linkLocal, cgnat := fmt.Sprintf("169.254.%d.2", n), fmt.Sprintf("100.64.%d.2", n)
	for _, a := range []string{linkLocal, cgnat} {
		netlab.IP(t, "-n", private, "addr", "add", a+"/32", "dev", "eth0")
		netlab.IP(t, "-n", zone, "route", "add", a+"/32", "via", fmt.Sprintf("10.200.%d.2", n))
	}
	for _, ns := range []struct{ name, gw string }{
		{app1, fmt.Sprintf("10.88.%d.1", n)}, {app2, fmt.Sprintf("10.89.%d.1", n)},
		{private, fmt.Sprintf("10.200.%d.1", n)}, {inet, fmt.Sprintf("203.0.113.%d", 4*n+1)},
	} {
		netlab.IP(t, "-n", ns.name, "route", "add", "default", "via", ns.gw)
	}
	const port = 8080
	lab.serve(inet, "inet", port)
	lab.serve(private, "private", port)
	lab.serve(app2, "app2", port)
	lab.serve(zone, "host", port)
	lab.serve(app1, "app1", port)

	inetAddr := net.JoinHostPort(fmt.Sprintf("203.0.113.%d", 4*n+2), strconv.Itoa(port))
	refused := map[string]string{ // address → who answers without the rules
		net.JoinHostPort(fmt.Sprintf("10.200.%d.2", n), strconv.Itoa(port)):      "private",
		net.JoinHostPort(linkLocal, strconv.Itoa(port)):                          "private",
		net.JoinHostPort(cgnat, strconv.Itoa(port)):                              "private",
		net.JoinHostPort(fmt.Sprintf("10.89.%d.2", n), strconv.Itoa(port)):       "app2",
		net.JoinHostPort(fmt.Sprintf("10.88.%d.1", n), strconv.Itoa(port)):       "host",
		net.JoinHostPort(fmt.Sprintf("203.0.113.%d", 4*n+1), strconv.Itoa(port)): "host",
	}
	addrs := []string{inetAddr}
	for a := range refused {
		addrs = append(addrs, a)
	}
	// The control: without the rules, app1 reaches every target through the zone host.
	before := lab.probeFrom(app1, addrs)
	if before[inetAddr] != "inet" {
		t.Fatalf("control: the internet from app1: %q", before[inetAddr])
	}
	for a, who := range refused {
		if before[a] != who {
			t.Fatalf("control: %s from app1 answered %q, want %q", a, before[a], who)
		}
	}

	fw := ContainerFirewall{Nft: "nft", Table: "tori_cftest"}
	cmd := exec.Command("ip", "netns", "exec", zone, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(fw.Ruleset())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("load the rules: %v: %s\n%s", err, out, fw.Ruleset())
	}
	after := lab.probeFrom(app1, addrs)
	if after[inetAddr] != "inet" {
		t.Errorf("the internet from app1 with the rules: %q", after[inetAddr])
	}
	for a := range refused {
		if !strings.HasPrefix(after[a], "refused:") {
			t.Errorf("%s reached from a container (%q): it must be refused", a, after[a])
		}
	}
	// The host still reaches the container, as the edge does through the published port.
	if got := lab.probeFrom(zone, []string{net.JoinHostPort(fmt.Sprintf("10.88.%d.2", n), strconv.Itoa(port))}); !strings.Contains(fmt.Sprint(got), "app1") {
		t.Errorf("the host to the container: %v", got)
	}
	// Loading again replaces the table rather than failing or doubling it.
	cmd = exec.Command("ip", "netns", "exec", zone, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(fw.Ruleset())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("load the rules again: %v: %s", err, out)
	}
}
