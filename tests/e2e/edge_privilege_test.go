package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// capNetBindService is CAP_NET_BIND_SERVICE's bit: the one capability the edge may hold.
const capNetBindService = 1 << 10

// The process listening on EDGE_ADDR and EDGE_TLS_ADDR is the zone's edge: not root, with no
// capability beyond binding ports (none in its bounding set either), no_new_privs set, and
// not the agent; a service app and a static site are still served through it, over HTTPS
// (and plain HTTP redirects).
func TestEdgeRunsUnprivileged(t *testing.T) {
	s := defaultStack(t)
	agent := s.Pid(t, "zoneagent")
	for _, v := range []string{"EDGE_ADDR", "EDGE_TLS_ADDR"} {
		_, port, _ := net.SplitHostPort(s.Env[v])
		pid := listenerPID(t, port)
		status := procStatus(t, pid)
		t.Logf("%s %s: pid %d Uid %q CapPrm %s CapEff %s CapBnd %s CapAmb %s NoNewPrivs %s", v, s.Env[v], pid,
			status["Uid"], status["CapPrm"], status["CapEff"], status["CapBnd"], status["CapAmb"], status["NoNewPrivs"])
		if pid == agent {
			t.Fatalf("%s is served by the zone agent itself (pid %d)", v, pid)
		}
		for _, uid := range strings.Fields(status["Uid"]) {
			if uid == "0" {
				t.Fatalf("%s is served by a process with uid 0: Uid %q", v, status["Uid"])
			}
		}
		for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			bits, err := strconv.ParseUint(status[set], 16, 64)
			if err != nil {
				t.Fatalf("%s %s: %q", v, set, status[set])
			}
			if bits&^capNetBindService != 0 {
				t.Fatalf("%s: %s is %s, more than CAP_NET_BIND_SERVICE", v, set, status[set])
			}
		}
		if status["NoNewPrivs"] != "1" {
			t.Fatalf("%s: NoNewPrivs %q", v, status["NoNewPrivs"])
		}
		if groups := strings.Fields(status["Groups"]); len(groups) != 0 {
			t.Fatalf("%s: supplementary groups %v", v, groups)
		}
	}

	a := s.NewAccount(t, "edgeprivilege")
	site := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, site, sitePart{"index.html", "a site through the unprivileged edge"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy site: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, site, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, site, "/", "a site through the unprivileged edge")

	svc := createApp(t, s, a.Token, "service")
	m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	r = deploySource(t, s, a.Token, svc, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": helloPy}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy service: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, svc, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, svc, "/", "hello from a sandbox")
	// Many requests at once: connections come from the runtime, one per pooled connection.
	errs := make(chan error, 32)
	for range 32 {
		go func() {
			resp, err := s.EdgeClient().Get(s.EdgeURL(svc+".apps.localhost", "/"))
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(b) != "hello from a sandbox" {
				errs <- fmt.Errorf("%d %q", resp.StatusCode, b)
				return
			}
			errs <- nil
		}()
	}
	for range 32 {
		if err := <-errs; err != nil {
			t.Fatalf("a concurrent request: %v", err)
		}
	}
	for _, slug := range []string{site, svc} {
		if status, _ := edgeGetPlain(t, s, slug+".apps.localhost", "/"); status != http.StatusPermanentRedirect {
			t.Fatalf("http:// %s: %d, want 308 to https", slug, status)
		}
	}
}

const helloPy = `
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"hello from a sandbox"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`
