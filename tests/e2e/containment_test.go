package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// hostilePy is a customer app that tries every way out of its sandbox and reports what
// each attempt got: "ok …" when it succeeded, anything else when it was refused.
const hostilePy = `
import json, os, socket, subprocess, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def attempt(fn):
    try:
        return "ok " + str(fn())[:200]
    except BaseException as e:
        return "refused " + type(e).__name__ + ": " + str(e)[:200]

def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.close()
    return "connected"

def read(path):
    with open(path, "rb") as f:
        return f.read(4096)

def write(path):
    with open(path, "w") as f:
        f.write("x")
    return "written"

def processes():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                out.append(open("/proc/%s/cmdline" % p).read().replace("\0", " ").strip())
            except OSError:
                pass
    return out

def forkbomb():
    # A child forks until the kernel refuses, reports how far it got, then its group dies.
    code = "import os,time\nn=0\ntry:\n    while True:\n        if os.fork()==0:\n            time.sleep(30); os._exit(0)\n        n+=1\nexcept OSError as e:\n    print(n, e.errno, flush=True)\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, start_new_session=True)
    return p.stdout.strip()

def hog():
    code = "b=[]\nwhile True:\n    b.append(bytearray(16<<20))\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    return "exit %d" % p.returncode

def fill(path):
    chunk = b"\0" * (1 << 20)
    n = 0
    try:
        with open(path, "wb") as f:
            while n < 4096:
                f.write(chunk); f.flush(); n += 1
            os.fsync(f.fileno())
        return "wrote %d MiB without error" % n
    except OSError as e:
        return "errno %d after %d MiB" % (e.errno, n)
    finally:
        try: os.remove(path)
        except OSError: pass

class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        r = {}
        if self.path == "/escape":
            for port in os.environ["PROBE_PORTS"].split(","):
                r["tcp 127.0.0.1:" + port] = attempt(lambda: connect(int(port)))
            r["read /proc/1/environ"] = attempt(lambda: read("/proc/1/environ"))
            for p in os.environ["PROBE_FILES"].split(","):
                r["read " + p] = attempt(lambda: read(p))
            for p in os.environ["PROBE_DIRS"].split(","):
                r["list " + p] = attempt(lambda: os.listdir(p))
            for p in ["/usr/evil", "/etc/evil", "/evil", "/var/tmp/evil", "/proc/evil", "/sys/evil"]:
                r["write " + p] = attempt(lambda: write(p))
            r["processes"] = processes()
            r["uid"] = os.getuid()
        elif self.path == "/forkbomb":
            r["forkbomb"] = attempt(forkbomb)
        elif self.path == "/hog":
            r["hog"] = attempt(hog)
        elif self.path == "/fill":
            r["app"] = fill("/app/fill")
            r["tmp"] = fill("/tmp/fill")
        elif self.path == "/setsid":
            subprocess.Popen(["sleep", "3599"], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r["started"] = True
        else:
            r["ok"] = True
        b = json.dumps(r).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(b)

ThreadingHTTPServer(("0.0.0.0", int(os.environ["PORT"])), H).serve_forever()
`

const neighbourPy = `
import os
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"neighbour ok")
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// A hostile source app tries each way out of its sandbox through the edge; every attempt
// fails, while a second app keeps answering.
func TestHostileAppIsContained(t *testing.T) {
	const memory, disk = 128 << 20, 64 << 20
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000", "ZONE_PROCESS_MEMORY_BYTES": strconv.Itoa(memory),
		"ZONE_APP_DISK_BYTES": strconv.Itoa(disk), "ZONE_PROCESS_MAX_PROCS": "128",
	}})
	a := s.NewAccount(t, "hostile")
	deployPy := func(slug, body string) {
		t.Helper()
		m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
		r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": body}), "")
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	}
	neighbour := createApp(t, s, a.Token, "service")
	deployPy(neighbour, neighbourPy)
	waitEdge(t, s, neighbour, "/", "neighbour ok")

	hostile := createApp(t, s, a.Token, "service")
	var ports []string
	for _, v := range []string{"GATEWAY_ADDR", "IDENTITY_ADDR", "BILLING_ADDR", "APPS_ADDR", "DEPLOYS_ADDR", "LOGS_ADDR", "DATABASES_ADDR", "ZONEAGENT_ADDR", "EDGE_ADDR", "EDGE_TLS_ADDR", "ZONE_EDGE_HEALTH_ADDR"} {
		_, port, _ := strings.Cut(s.Env[v], ":")
		ports = append(ports, port)
	}
	ports = append(ports, "5432", "5672")
	zoneApps := s.Env["ZONE_APPS_DIR"]
	env := map[string]string{
		"PROBE_PORTS": strings.Join(ports, ","),
		"PROBE_FILES": strings.Join([]string{filepath.Join(s.DataDir, "keyring.json"), "/proc/" + strconv.Itoa(s.Pid(t, "zoneagent")) + "/environ", "/proc/self/root/../../etc/shadow"}, ","),
		"PROBE_DIRS":  strings.Join([]string{s.DataDir, zoneApps, filepath.Dir(zoneApps), "/root", "/home", "/var/lib/postgresql"}, ","),
	}
	for k, v := range env {
		if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + hostile + "/env", Token: a.Token, Body: map[string]string{"key": k, "value": v}}); r.Status != http.StatusCreated {
			t.Fatalf("env: %d %s", r.Status, r.Body)
		}
	}
	deployPy(hostile, hostilePy)
	waitEdge(t, s, hostile, "/", `{"ok": true}`)
	probe := func(path string) map[string]any {
		t.Helper()
		status, body := edgeGet(t, s, hostile, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("GET %s: %s", path, body)
		}
		t.Logf("%s: %s", path, body)
		return out
	}
	neighbourServes := func(when string) {
		t.Helper()
		if status, body := edgeGet(t, s, neighbour, "/"); status != http.StatusOK || body != "neighbour ok" {
			t.Fatalf("the neighbour stopped answering %s: %d %q", when, status, body)
		}
	}

	got := probe("/escape")
	for k, v := range got {
		switch k {
		case "processes", "uid":
			continue
		case "read /proc/1/environ":
			// The namespace's first process is the sandbox's own (its environment is the
			// app's): nothing of the agent's may be in it.
			for _, leak := range []string{"DATABASE_URL", "AMQP_URL", "GATEWAY_SIGNING_KEY", "DATA_DIR"} {
				if strings.Contains(v.(string), leak) {
					t.Errorf("/proc/1/environ shows the agent's %s", leak)
				}
			}
			continue
		case "list /tmp":
			if v != "ok []" { // its own, empty /tmp: nothing of the host's
				t.Errorf("the app's /tmp shows %v", v)
			}
			continue
		}
		if str, _ := v.(string); !strings.HasPrefix(str, "refused") {
			t.Errorf("escape %s: %v", k, v)
		}
	}
	// Only its own processes: the sandbox's first process, the server, nothing of the host.
	procs, _ := got["processes"].([]any)
	if len(procs) == 0 || len(procs) > 3 {
		t.Errorf("the app sees %d processes: %v", len(procs), procs)
	}
	for _, p := range procs {
		if c := p.(string); !strings.Contains(c, "server.py") && !strings.HasPrefix(c, "bwrap") {
			t.Errorf("the app sees a process not its own: %q", c)
		}
	}
	uid := int(got["uid"].(float64))
	if uid < 200000 {
		t.Errorf("the app runs as uid %d, not one of the apps' range", uid)
	}

	// A fork bomb stops at the app's process limit; the neighbour keeps serving.
	fb := probe("/forkbomb")["forkbomb"].(string)
	n, _ := strconv.Atoi(strings.Fields(strings.TrimPrefix(fb, "ok "))[0])
	if !strings.HasPrefix(fb, "ok ") || n >= 128 {
		t.Errorf("fork bomb: %s", fb)
	}
	neighbourServes("during a fork bomb")

	// Memory past the cap: the process is killed, and the app's logs say so.
	if hog := probe("/hog")["hog"]; hog != "ok exit -9" {
		t.Errorf("memory hog: %v", hog)
	}
	harness.Eventually(t, 20*time.Second, "the R15 line in the app's logs", func() bool {
		return strings.Contains(string(s.Get(t, "/api/apps/"+hostile+"/logs", a.Token).Body), "R15 memory quota exceeded")
	})
	neighbourServes("after a memory hog")

	// Disk past the quota: "no space left on device" (28) in its tree and in /tmp.
	fill := probe("/fill")
	for _, k := range []string{"app", "tmp"} {
		if v, _ := fill[k].(string); !strings.HasPrefix(v, "errno 28 after") {
			t.Errorf("fill %s: %v", k, fill[k])
		}
	}

	// A setsid'd child runs as the app's uid on the host, and dies with the app.
	probe("/setsid")
	var sleeper int
	harness.Eventually(t, 10*time.Second, "the setsid child on the host", func() bool {
		sleeper = findProcess("sleep 3599")
		return sleeper > 0
	})
	if owner := processUID(t, sleeper); owner != uid {
		t.Errorf("the setsid child is uid %d on the host, want the app's %d", owner, uid)
	}
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + hostile, Token: a.Token}); r.Status >= 300 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 20*time.Second, "the setsid child to die with its app", func() bool { return findProcess("sleep 3599") == 0 })
	neighbourServes("after the hostile app's deletion")
}

// findProcess is the pid of a host process whose command line is cmdline, or 0.
func findProcess(cmdline string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")) == cmdline {
			return pid
		}
	}
	return 0
}

func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid, _ := strconv.Atoi(strings.Fields(rest)[0])
			return uid
		}
	}
	return -1
}
