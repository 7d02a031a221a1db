package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// dbLimitsAppPy is a source app that pushes at its database's limits from inside its sandbox,
// through $DATABASE_URL and the zone's pooler: writes past its cap in READ WRITE
// transactions, a query whose sort spills to temporary files, a statement after raising its
// own statement_timeout, and a flood of bare connections to the pooler.
const dbLimitsAppPy = `import glob, json, os, selectors, socket, subprocess, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, urlparse, parse_qs
PSQL = (sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")) + ["psql"])[0]
URL = os.environ.get("DATABASE_URL", "")
HELD = []
def psql(sql):
    started = time.time()
    p = subprocess.run([PSQL, "-X", "-q", "-tA", URL, "-c", sql], capture_output=True, text=True, timeout=120)
    return {"rc": p.returncode, "out": p.stdout.strip(), "err": p.stderr.strip()[-300:], "seconds": time.time() - started}
ROWS = "INSERT INTO big SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 50) g, generate_series(1, 1000) r GROUP BY r"
# A connection is held when the pooler itself answers on it. Inside the sandbox every
# connect() succeeds at once (pasta accepts it and dials the host's side after), so an open
# socket alone proves nothing: a loaded host may not have dialled, or reset, its other side
# yet. Each socket asks for TLS (an SSLRequest) and counts only on the pooler's one-byte
# answer; a reset, a close or no answer in time is not held.
SSL_REQUEST = (8).to_bytes(4, "big") + (80877103).to_bytes(4, "big")
def hold(n):
    parts = urlsplit(URL)
    socks, refused = [], 0
    for _ in range(n):
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect((parts.hostname, parts.port)); socks.append(s)
        except OSError:
            refused += 1; s.close()
    sel = selectors.DefaultSelector()
    for s in socks:
        try:
            s.sendall(SSL_REQUEST)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        except OSError:
            s.close()
    held, deadline = [], time.time() + 60
    while sel.get_map() and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            sel.unregister(s)
            try:
                answer = s.recv(1)
            except OSError:
                answer = b""
            if answer in (b"N", b"S"):
                held.append(s)
            else:
                s.close()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    HELD.extend(held)
    return {"held": len(held), "refused": n - len(held)}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        if u.path == "/fill":
            psql("BEGIN; SET TRANSACTION READ WRITE; CREATE TABLE IF NOT EXISTS big (body text); COMMIT")
            for i in range(400):
                r = psql("BEGIN; SET TRANSACTION READ WRITE; " + ROWS + "; COMMIT")
                if r["rc"] != 0:
                    r["statements"] = i
                    break
        elif u.path == "/temp":
            r = psql("SET work_mem = '64kB'; SELECT sum(length(pad)) FROM (SELECT g, repeat(md5(g::text), 16) AS pad FROM generate_series(1, 1000000) g ORDER BY g DESC) s")
        elif u.path == "/size":
            r = psql("SELECT pg_database_size(current_database())")
        elif u.path == "/recover":
            r = psql("BEGIN; SET TRANSACTION READ WRITE; TRUNCATE big; COMMIT")
        elif u.path == "/raised":
            r = psql("SET statement_timeout = '1h'; SELECT pg_sleep(90)")
        elif u.path == "/hold":
            r = hold(int(q["n"][0]))
        elif u.path == "/ping":
            r = psql("SELECT 1")
        else:
            r = {"ok": True, "hasURL": URL != ""}
        b = json.dumps(r).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(b)
ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// The hard limits under a managed database, from inside a real sandbox: writing past its cap
// in READ WRITE transactions, and a temp-file-heavy query, stop at the ceiling (at most 110 %
// of the cap) with "no space"; the contract's recovery transaction still works and the
// database is writable again; a statement past the zone's limit is cancelled although the
// role raised its own statement_timeout; and while one app floods its pooler address with
// 2,000 connections, another account's app keeps connecting.
func TestDatabaseHardLimitsFromTheSandbox(t *testing.T) {
	const capBytes = 64 << 20
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000",
		// The zone's statement limit, 60 s by default, and its check, short for the test.
		"DATABASE_STATEMENT_TIMEOUT": "8s", "DATABASE_STATEMENT_CHECK_INTERVAL": "200ms",
		"DATABASE_SIZE_CHECK_INTERVAL": "200ms", "ZONE_DATABASE_MAX_BYTES_OVERRIDE": "67108864",
		// Room for 2,000 sockets in the flooding app's one process.
		"ZONE_PROCESS_MAX_FILES": "4096",
	}})
	deployDBApp := func(a harness.Account) string {
		t.Helper()
		slug := createApp(t, s, a.Token, "service")
		if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("create database: %d %s", r.Status, r.Body)
		}
		harness.Eventually(t, 30*time.Second, "DATABASE_URL of "+slug, func() bool {
			_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
			return ok
		})
		m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
		r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": dbLimitsAppPy}), "")
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
		return slug
	}
	probe := func(slug, path string) map[string]any {
		t.Helper()
		status, body := edgeGet(t, s, slug, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("GET %s: %s", path, body)
		}
		t.Logf("%s %s: %s", slug, path, body)
		return out
	}
	a := s.NewAccount(t, "db-limits")
	slug := deployDBApp(a)
	sizeOf := func() float64 {
		t.Helper()
		r := probe(slug, "/size")
		var n float64
		if err := json.Unmarshal([]byte(r["out"].(string)), &n); err != nil || r["rc"] != float64(0) {
			t.Fatalf("size: %v", r)
		}
		return n
	}

	// Temporary files meet the ceiling: the sort fails for want of space, nothing else fills.
	if r := probe(slug, "/temp"); r["rc"] == float64(0) || !strings.Contains(r["err"].(string), "No space left on device") {
		t.Fatalf("a temp-file-heavy query past the ceiling: %v", r)
	}
	// Past the cap the database turns read-only; READ WRITE transactions go on writing until
	// the ceiling refuses them.
	if r := probe(slug, "/fill"); r["rc"] == float64(0) || !strings.Contains(r["err"].(string), "No space left on device") {
		t.Fatalf("writing past the ceiling: %v", r)
	}
	if size := sizeOf(); size > capBytes*1.1 {
		t.Fatalf("the database holds %.0f bytes, over 110 %% of its %d-byte cap", size, capBytes)
	}
	status := func() map[string]any { return s.Get(t, "/api/apps/"+slug+"/database", a.Token).Map(t) }
	harness.Eventually(t, 30*time.Second, "read_only", func() bool { return status()["status"] == "read_only" })
	// The recovery works once the size check has given the full filesystem its reserve back.
	harness.Eventually(t, 30*time.Second, "the recovery transaction", func() bool { return probe(slug, "/recover")["rc"] == float64(0) })
	harness.Eventually(t, 30*time.Second, "ready again", func() bool { return status()["status"] == "ready" })
	if size := sizeOf(); size > capBytes/2 {
		t.Fatalf("after the recovery the database holds %.0f bytes", size)
	}

	// The role raises its own statement_timeout to an hour; the zone still cancels the
	// statement past its limit (8 s here; the statement asks for 90).
	if r := probe(slug, "/raised"); r["rc"] == float64(0) || !strings.Contains(r["err"].(string), "canceling statement due to user request") || r["seconds"].(float64) > 60 {
		t.Fatalf("a statement past the zone's limit: %v", r)
	}

	// One app floods its pooler address; another account's app keeps connecting.
	other := s.NewAccount(t, "db-limits-other")
	otherSlug := deployDBApp(other)
	flood := probe(slug, "/hold?n=2000")
	if held := flood["held"].(float64); held < 1 || held > 50 {
		t.Fatalf("the flooding app holds %v connections; its cap is 50 (10 for each of its plan's 5)", held)
	}
	for i := 0; i < 5; i++ {
		if r := probe(otherSlug, "/ping"); r["rc"] != float64(0) || r["out"] != "1" {
			t.Fatalf("the other app while the first floods the pooler: %v", r)
		}
	}
}
