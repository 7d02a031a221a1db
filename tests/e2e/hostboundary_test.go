package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// escapeMarkC is a customer's shared object. Loaded by any program (LD_PRELOAD, LD_AUDIT,
// a library on LD_LIBRARY_PATH, a gconv module), its constructor appends a line naming the
// program to MARK in /tmp. A sandbox's /tmp is its own: the mark in the host's /tmp means
// the object ran outside the sandbox.
const escapeMarkC = `
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	char exe[256] = {0}, line[320];
	if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) strcpy(exe, "?");
	int fd = open(MARK, O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd >= 0) { int n = snprintf(line, sizeof line, "ctor %s\n", exe); write(fd, line, n); close(fd); }
}
unsigned int la_version(unsigned int v) { return v; }
`

// markServerPy answers /mark with what the object wrote in the sandbox's /tmp, and /seen with
// what the sandbox shows of itself: its first process's command line and its mounts.
const markServerPy = `
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
def read(p):
    try:
        with open(p) as f: return f.read()
    except OSError as e: return "ERR " + str(e)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        r = {"ok": True}
        if self.path == "/mark":
            r = {"mark": read(os.environ["MARK_FILE"]), "preload": os.environ.get("LD_PRELOAD", "")}
        elif self.path == "/seen":
            r = {"cmdline": read("/proc/1/cmdline").replace("\0", " "), "mounts": read("/proc/self/mountinfo")}
        b = json.dumps(r).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(b)
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// modeTarball packs files with their modes (scripts must stay executable).
func modeTarball(t *testing.T, files map[string]string, modes map[string]int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		mode := int64(0o644)
		if m, ok := modes[name]; ok {
			mode = m
		}
		tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// A source app ships a shared object and sets LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH,
// GCONV_PATH, PATH, BASH_ENV, ENV and PYTHONSTARTUP to its own files: by their paths in the
// sandbox, and by the host path of its previous deploy's tree (what an app once read from
// /proc/1/cmdline). Deployed again (build, release Job, service), the object never runs on
// the host, while LD_PRELOAD takes effect inside the app; the sandbox shows no host path of
// its tree; and no process of the zone, the agent or any of its children, holds the
// gateway's signing key.
func TestAppVariablesStayInTheSandbox(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "boundary")
	slug := createApp(t, s, a.Token, "service")
	mark := "/tmp/tori-escape-mark-" + harness.Hex(8)
	t.Cleanup(func() { os.Remove(mark) })

	src := filepath.Join(t.TempDir(), "mark.c")
	os.WriteFile(src, []byte(escapeMarkC), 0o644)
	so := filepath.Join(t.TempDir(), "libmark.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-o", so, "-DMARK=\""+mark+"\"", src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	object, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{"build": "echo built", "release": []string{"/bin/true"}, "start": "python3 server.py"})
	script := "#!/bin/sh\necho \"script $0\" >> " + mark + "\n"
	files := map[string]string{
		"tori.json": string(manifest), "server.py": markServerPy, "libmark.so": string(object),
		"gconv/gconv-modules": "module INTERNAL MARK// libmark 1\nmodule MARK// INTERNAL libmark 1\n",
		"gconv/libmark.so":    string(object),
		"bashenv.sh":          "echo \"bash_env $0\" >> " + mark + "\n",
		"startup.py":          "open(" + strconv.Quote(mark) + ", 'a').write('pythonstartup\\n')\n",
	}
	modes := map[string]int64{"libmark.so": 0o755, "gconv/libmark.so": 0o755}
	for _, tool := range []string{"nsenter", "bwrap", "pasta", "nft", "mount", "mkfs.ext4", "prlimit", "pgbouncer"} {
		files["bin/"+tool] = script
		modes["bin/"+tool] = 0o755
	}
	archive := modeTarball(t, files, modes)
	deploy := func() string {
		t.Helper()
		r := deploySource(t, s, a.Token, slug, archive, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		id := r.Map(t)["id"].(string)
		waitStatus(t, s, a.Token, slug, id, "live")
		return id
	}
	setEnv := func(k, v string) {
		t.Helper()
		if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": k, "value": v}}); r.Status != http.StatusCreated {
			t.Fatalf("env %s: %d %s", k, r.Status, r.Body)
		}
	}
	setEnv("MARK_FILE", mark)
	first := deploy()
	// The first deploy's tree on the host: the app's files at a path host programs can open.
	trees, _ := filepath.Glob(filepath.Join(s.Env["ZONE_APPS_DIR"], "*", first))
	if len(trees) != 1 {
		t.Fatalf("the first deploy's tree: %v", trees)
	}
	host := trees[0]
	both := func(rel, sep string) string { return filepath.Join("/app", rel) + sep + filepath.Join(host, rel) }
	for k, v := range map[string]string{
		"LD_PRELOAD":      both("libmark.so", " "),
		"LD_AUDIT":        both("libmark.so", ":"),
		"LD_LIBRARY_PATH": both("", ":"),
		"GCONV_PATH":      both("gconv", ":"),
		"PATH":            both("bin", ":") + ":/usr/local/bin:/usr/bin:/bin",
		"BASH_ENV":        filepath.Join(host, "bashenv.sh"),
		"ENV":             filepath.Join(host, "bashenv.sh"),
		"PYTHONSTARTUP":   filepath.Join(host, "startup.py"),
	} {
		setEnv(k, v)
	}
	deploy()
	waitEdge(t, s, slug, "/", `{"ok": true}`)

	if b, err := os.ReadFile(mark); err == nil {
		t.Fatalf("the app's object ran on the host:\n%s", b)
	}
	var got map[string]string
	_, body := edgeGet(t, s, slug, "/mark")
	json.Unmarshal([]byte(body), &got)
	if !strings.Contains(got["mark"], "ctor /usr/bin/python3") || !strings.HasPrefix(got["preload"], "/app/libmark.so") {
		t.Fatalf("LD_PRELOAD did not take effect inside the app: %s", body)
	}
	_, body = edgeGet(t, s, slug, "/seen")
	json.Unmarshal([]byte(body), &got)
	for _, what := range []string{"cmdline", "mounts"} {
		if got[what] == "" || strings.HasPrefix(got[what], "ERR") {
			t.Fatalf("the app could not read its %s: %s", what, body)
		}
		for _, p := range []string{s.Env["ZONE_APPS_DIR"], s.DataDir} {
			if strings.Contains(got[what], p) {
				t.Errorf("the sandbox's %s names the host path %s:\n%s", what, p, got[what])
			}
		}
	}

	// No process of the zone holds the signing key: the agent, and every process it started
	// (PgBouncer, pasta, the sandboxes' bubblewrap, the app).
	key := s.Env["GATEWAY_SIGNING_KEY"]
	agent := s.Pid(t, "zoneagent")
	procs := append([]int{agent}, descendants(agent)...)
	if len(procs) < 3 {
		t.Fatalf("the zone agent has %d processes under it; want its sandboxes and pasta", len(procs)-1)
	}
	var checked []string
	for _, pid := range procs {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue // ended meanwhile
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		name := fmt.Sprintf("%d %s", pid, strings.Fields(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})) + " ")[0])
		checked = append(checked, name)
		if bytes.Contains(environ, []byte("GATEWAY_SIGNING_KEY")) || bytes.Contains(environ, []byte(key)) {
			t.Errorf("process %s holds the signing key", name)
		}
	}
	t.Logf("environments read: %s", strings.Join(checked, ", "))
}

// descendants are every process under pid on the host.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				pp, _ := strconv.Atoi(strings.TrimSpace(v))
				children[pp] = append(children[pp], p)
			}
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
