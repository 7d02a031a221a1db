package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"tori.dev/services/zoneagent/internal/netlab"
)

// testHost is a host the test makes itself: a network namespace joined to this one by a veth
// pair, with a route from the host, and a TCP server in it that answers every connection
// with its name. No test dials an address outside this machine.
type testHost struct {
	name string
	addr string // the server's address, ip:port
}

// newTestHost makes namespace <name>: the host's end of the veth pair gets hostIP/prefix,
// the namespace's end nsIP/prefix plus extra addresses (routed from the host through the
// same pair), and the namespace runs the netlab.Banner server on port. Everything is removed when
// the test ends, failed or not.
func newTestHost(t *testing.T, label, hostIP, nsIP string, prefix int, extra []string, port int) testHost {
	t.Helper()
	suffix := strconv.Itoa(rand.IntN(1 << 20))
	ns := "tori-" + label + "-" + suffix
	hostEnd, nsEnd := "trh"+label[:1]+suffix, "trn"+label[:1]+suffix
	netlab.IP(t, "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	netlab.IP(t, "link", "add", hostEnd, "type", "veth", "peer", "name", nsEnd)
	// Deleting the namespace deletes its end and so the pair; this covers a failure before.
	t.Cleanup(func() { exec.Command("ip", "link", "delete", hostEnd).Run() })
	netlab.IP(t, "link", "set", nsEnd, "netns", ns)
	netlab.IP(t, "addr", "add", fmt.Sprintf("%s/%d", hostIP, prefix), "dev", hostEnd)
	netlab.IP(t, "link", "set", hostEnd, "up")
	netlab.IP(t, "-n", ns, "addr", "add", fmt.Sprintf("%s/%d", nsIP, prefix), "dev", nsEnd)
	for _, a := range extra {
		netlab.IP(t, "-n", ns, "addr", "add", a+"/32", "dev", nsEnd)
		netlab.IP(t, "route", "add", a+"/32", "via", nsIP, "dev", hostEnd)
	}
	netlab.IP(t, "-n", ns, "link", "set", nsEnd, "up")
	netlab.IP(t, "-n", ns, "link", "set", "lo", "up")
	netlab.IP(t, "-n", ns, "route", "add", "default", "via", hostIP)

	srv := exec.Command("ip", "netns", "exec", ns, "/usr/bin/python3", "-c", netlab.Banner, label, strconv.Itoa(port))
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("test host %s did not start: %q", label, line)
	}
	return testHost{name: label, addr: net.JoinHostPort(nsIP, strconv.Itoa(port))}
}

// hostBanner is a server on the host itself answering with name.
func hostBanner(t *testing.T, addr, name string) (string, bool) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", false
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(name))
			c.Close()
		}
	}()
	return ln.Addr().String(), true
}

// dialFromHost is what the host itself gets from addr: the control that proves each target
// the sandbox is refused really answers.
func dialFromHost(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("the host cannot reach its own test target %s: %v", addr, err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	var b [64]byte
	n, _ := c.Read(b[:])
	return string(b[:n])
}

// The network promise, against test hosts this test makes: a sandboxed app reaches the
// "internet" (203.0.113.2, a documentation address standing in for a public host) and the
// pooler's port (127.0.0.1:6432 as it sees it), and is refused a private host (10.200.0.2),
// link-local (169.254/16) and shared/CGNAT (100.64/10) addresses, the host's own addresses
// and every loopback service of the host, though the host itself reaches each of them.
func TestSandboxEgress(t *testing.T) {
	sb := testSandbox(t)
	n := rand.IntN(60) + 1
	inet := newTestHost(t, "inet", fmt.Sprintf("203.0.113.%d", 4*n+1), fmt.Sprintf("203.0.113.%d", 4*n+2), 30, nil, 8080)
	private := newTestHost(t, "private", fmt.Sprintf("10.200.%d.1", n), fmt.Sprintf("10.200.%d.2", n), 30,
		[]string{fmt.Sprintf("169.254.%d.2", n), fmt.Sprintf("100.64.%d.2", n)}, 8080)
	linkLocal := fmt.Sprintf("169.254.%d.2:8080", n)
	cgnat := fmt.Sprintf("100.64.%d.2:8080", n)
	hostOwn := fmt.Sprintf("203.0.113.%d", 4*n+1) // the host's end of the "internet" pair

	// A loopback service of the host (as Postgres or the gateway would be), and one on every
	// address; and the pooler: the real one when it runs, otherwise a stand-in.
	loop, _ := hostBanner(t, "127.0.0.1:0", "loopback")
	any, _ := hostBanner(t, "0.0.0.0:0", "any")
	_, anyPort, _ := net.SplitHostPort(any)
	pooler := "127.0.0.1:" + strconv.Itoa(sb.PoolerPort)
	poolerBanner := "pooler"
	if _, ok := hostBanner(t, pooler, "pooler"); !ok {
		poolerBanner = "" // something of the host listens there already: a connection is enough
	}

	targets := map[string]string{ // address → what the app must get ("" refused)
		inet.addr:                          "inet",
		pooler:                             poolerBanner,
		private.addr:                       "",
		linkLocal:                          "",
		cgnat:                              "",
		loop:                               "",
		"127.0.0.1:" + anyPort:             "",
		net.JoinHostPort(hostOwn, anyPort): "",
	}
	refusedWant := map[string]string{private.addr: "private", linkLocal: "private", cgnat: "private", loop: "loopback",
		"127.0.0.1:" + anyPort: "any", net.JoinHostPort(hostOwn, anyPort): "any"}
	for addr, want := range refusedWant {
		if got := dialFromHost(t, addr); got != want {
			t.Fatalf("control: the host got %q from %s, want %q", got, addr, want)
		}
	}

	app := uuid.NewString()
	sb.SetUID(app, testUIDBase+999)
	t.Cleanup(func() { sb.ForgetUID(app); sb.Cgroups.Remove(app) })
	dir, err := os.MkdirTemp("", "tori-egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "probe.py"), []byte(netlab.Probe), 0o644)

	argv := []string{"/usr/bin/python3", "/app/probe.py"}
	for addr := range targets {
		argv = append(argv, addr)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := sb.Start(ctx, Spec{AppID: app, Dir: dir, Argv: argv, Env: Environ(nil, 0), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out.String())
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		addr, rest, _ := strings.Cut(line, " ")
		got[addr] = rest
	}
	for addr, want := range targets {
		res, ok := got[addr]
		switch {
		case !ok:
			t.Errorf("%s: no result\n%s", addr, out.String())
		case want == "" && !strings.HasPrefix(res, "refused:"):
			t.Errorf("%s reached from the sandbox (%q): it must be refused", addr, res)
		case addr == pooler && poolerBanner == "":
			// The host's own pooler answers as it will: connecting is what counts.
			if strings.HasPrefix(res, "refused:") {
				t.Errorf("the pooler's port from the sandbox: %s", res)
			}
		case want != "" && res != want:
			t.Errorf("%s from the sandbox: %q, want %q", addr, res, want)
		}
	}
	t.Logf("sandbox egress:\n%s", out.String())
}
