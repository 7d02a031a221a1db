package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"tori.dev/tests/e2e/harness"
)

// noLimitsC is a customer's shared object that makes every way of setting a limit a no-op
// that reports success: a limit set by a program of the app's own environment is then no
// limit at all.
const noLimitsC = `
int setrlimit(int resource, const void *limit) { return 0; }
int setrlimit64(int resource, const void *limit) { return 0; }
int prlimit(int pid, int resource, const void *limit, void *old) { return 0; }
int prlimit64(int pid, int resource, const void *limit, void *old) { return 0; }
`

// sandboxSeenPy answers /limits with the app's own limits and whether the object is loaded,
// and /dns with its resolv.conf and what two names resolve to.
const sandboxSeenPy = `
import json, os, socket
from http.server import BaseHTTPRequestHandler, HTTPServer
def read(p):
    try:
        with open(p) as f: return f.read()
    except OSError as e: return "ERR " + str(e)
def resolve(name):
    try: return sorted({a[4][0] for a in socket.getaddrinfo(name, 80, socket.AF_INET)})
    except OSError as e: return ["ERR " + str(e)]
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        r = {"ok": True}
        if self.path == "/limits":
            r = {"limits": read("/proc/self/limits"), "loaded": "libnolimits.so" in read("/proc/self/maps")}
        elif self.path == "/dns":
            r = {"resolv": read("/etc/resolv.conf"), "public": resolve("public.tori.test"), "private": resolve("private.tori.test")}
        b = json.dumps(r).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(b)
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// deploySeenApp deploys sandboxSeenPy (and extra files) to a new service app with vars set,
// and waits until the edge serves it.
func deploySeenApp(t *testing.T, s *harness.Stack, name string, files map[string]string, modes map[string]int64, vars map[string]string) string {
	t.Helper()
	a := s.NewAccount(t, name)
	slug := createApp(t, s, a.Token, "service")
	for k, v := range vars {
		if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": k, "value": v}}); r.Status != http.StatusCreated {
			t.Fatalf("env %s: %d %s", k, r.Status, r.Body)
		}
	}
	manifest, _ := json.Marshal(map[string]any{"start": "python3 server.py"})
	files["tori.json"], files["server.py"] = string(manifest), sandboxSeenPy
	r := deploySource(t, s, a.Token, slug, modeTarball(t, files, modes), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", `{"ok": true}`)
	return slug
}

// Issue 36, point 4: an app that preloads a no-op setrlimit/prlimit64 still runs with the
// sandbox's hard limits, 1,024 open files and no core dumps (the agent's own are 20,000 and
// unlimited here), set before anything of the app existed.
func TestPreloadedNoOpLimitsChangeNothing(t *testing.T) {
	s := defaultStack(t)
	src := filepath.Join(t.TempDir(), "nolimits.c")
	os.WriteFile(src, []byte(noLimitsC), 0o644)
	so := filepath.Join(t.TempDir(), "libnolimits.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	object, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	slug := deploySeenApp(t, s, "nolimits", map[string]string{"libnolimits.so": string(object)},
		map[string]int64{"libnolimits.so": 0o755}, map[string]string{"LD_PRELOAD": "/app/libnolimits.so"})

	var got struct {
		Limits string `json:"limits"`
		Loaded bool   `json:"loaded"`
	}
	_, body := edgeGet(t, s, slug, "/limits")
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/limits: %v: %s", err, body)
	}
	if !got.Loaded {
		t.Fatalf("the preloaded object is not in the app: %s", body)
	}
	want := map[string][2]string{"Max open files": {"1024", "1024"}, "Max core file size": {"0", "0"}}
	for _, line := range strings.Split(got.Limits, "\n") {
		for name, w := range want {
			if rest, ok := strings.CutPrefix(line, name); ok {
				f := strings.Fields(rest)
				if len(f) < 2 || f[0] != w[0] || f[1] != w[1] {
					t.Errorf("%s: soft and hard %v, want %v", name, f, w)
				}
				delete(want, name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("no line for %v in the app's limits:\n%s", want, got.Limits)
	}
}

// loopbackDNS is a resolver on 127.0.0.1 (UDP) that answers public.tori.test with a public
// address and private.tori.test with the host network's kind of addresses.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string][][4]byte{"public.tori.test.": {{203, 0, 113, 7}}, "private.tori.test.": {{10, 255, 255, 53}, {169, 254, 169, 254}}}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				for _, a := range answers[q.Name.String()] {
					b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5}, dnsmessage.AResource{A: a})
				}
			}
			if msg, err := b.Finish(); err == nil {
				pc.WriteTo(msg, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String()
}

// Issue 36, point 7: the app's resolver is the zone's own (its resolv.conf names
// 127.0.0.1 in its namespace, never the host's nameservers, which sit on a private address
// on this project's machine); names resolve through it to the upstream the zone was given
// (ZONE_SANDBOX_RESOLVERS, here a resolver of the test's on loopback), and an answer of
// non-public addresses reaches the app empty.
func TestSandboxResolverIsTheZones(t *testing.T) {
	upstream := loopbackDNS(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "ZONE_SANDBOX_RESOLVERS": upstream}})
	slug := deploySeenApp(t, s, "resolver", map[string]string{}, nil, nil)

	var got struct {
		Resolv  string   `json:"resolv"`
		Public  []string `json:"public"`
		Private []string `json:"private"`
	}
	_, body := edgeGet(t, s, slug, "/dns")
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/dns: %v: %s", err, body)
	}
	var servers []string
	for _, line := range strings.Split(got.Resolv, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" {
			servers = append(servers, f[1])
		}
	}
	if strings.Join(servers, " ") != "127.0.0.1" {
		t.Errorf("the app's nameservers are %v, want the zone's resolver alone (127.0.0.1):\n%s", servers, got.Resolv)
	}
	if strings.Join(got.Public, " ") != "203.0.113.7" {
		t.Errorf("public.tori.test resolved in the app to %v, want 203.0.113.7 (the zone's upstream)", got.Public)
	}
	if len(got.Private) != 1 || !strings.HasPrefix(got.Private[0], "ERR") {
		t.Errorf("private.tori.test resolved in the app to %v, want no address", got.Private)
	}
	host, _ := os.ReadFile("/etc/resolv.conf")
	for _, line := range strings.Split(string(host), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" && strings.Contains(got.Resolv, f[1]) && f[1] != "127.0.0.1" {
			t.Errorf("the app's resolv.conf names the host's nameserver %s", f[1])
		}
	}
}
