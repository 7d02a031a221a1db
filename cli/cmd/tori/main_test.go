package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

var toriBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tori-cli-test-")
	if err != nil {
		panic(err)
	}
	toriBin = filepath.Join(dir, "tori")
	if out, err := exec.Command("go", "build", "-o", toriBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build tori: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeAPI accepts one static deploy that goes live with a build line.
func fakeAPI(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	polls := 0
	created := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/api/apps/site":
			fmt.Fprint(w, `{"slug":"site","kind":"static","url":"https://site.apps.localhost"}`)
		case r.Method == "POST" && r.URL.Path == "/api/apps/site/deploys":
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(201)
			fmt.Fprintf(w, `{"id":"d1","kind":"static","status":"building","createdAt":%q}`, created)
		case r.URL.Path == "/api/apps/site/deploys/d1":
			polls++
			status := "building"
			if polls > 1 {
				status = "live"
			}
			fmt.Fprintf(w, `{"id":"d1","kind":"static","status":%q,"createdAt":%q}`, status, created)
		case r.URL.Path == "/api/apps/site/logs/stream":
			// The live stream: the build line, then quiet until the client leaves; a
			// reconnection (Last-Event-ID) has nothing new.
			w.Header().Set("Content-Type", "text/event-stream")
			if r.Header.Get("Last-Event-ID") == "" {
				fmt.Fprintf(w, "id: c1\ndata: {\"id\":\"1\",\"timestamp\":%q,\"stream\":\"build\",\"deployId\":\"d1\",\"message\":\"unpacked 300 files\"}\n\n", created)
			}
			w.(http.Flusher).Flush()
			mu.Unlock()
			<-r.Context().Done()
			mu.Lock()
		case r.URL.Path == "/api/apps/site/logs":
			fmt.Fprintf(w, `{"retentionDays":1,"start":%q,"end":%q,"next":null,"entries":[{"id":"1","timestamp":%q,"stream":"build","deployId":"d1","message":"unpacked 300 files"}]}`,
				created, time.Now().UTC().Format(time.RFC3339Nano), created)
		default:
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"not found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func site(t *testing.T) string {
	dir := t.TempDir()
	for i := 0; i < 300; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.html", i)), bytes.Repeat([]byte("x"), 4096), 0o644)
	}
	return dir
}

func deployEnv(t *testing.T, api string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"TORI_API_URL=" + api, "TORI_TOKEN=svc_test", "TERM=xterm-256color"}, extra...)
}

// On a terminal: a redrawn progress bar and colours; piped or with NO_COLOR: plain lines.
func TestTerminalGetsBarsAndColoursPipesDoNot(t *testing.T) {
	api := fakeAPI(t)
	dir := site(t)

	cmd := exec.Command(toriBin, "deploy", dir, "--app", "site")
	cmd.Env = deployEnv(t, api.URL)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	var tty bytes.Buffer
	io.Copy(&tty, f) // until the child exits and the pty reports EIO
	if err := cmd.Wait(); err != nil {
		t.Fatalf("deploy on a terminal: %v\n%s", err, tty.String())
	}
	got := tty.String()
	for _, want := range []string{"\r\x1b[K", "100%", "█", "\x1b[34mbuild", "\x1b[32mLive:"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}

	for _, extra := range [][]string{nil, {"NO_COLOR=1"}} {
		cmd = exec.Command(toriBin, "deploy", dir, "--app", "site")
		cmd.Env = deployEnv(t, fakeAPI(t).URL, extra...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("piped deploy: %v\n%s", err, errb.String())
		}
		all := out.String() + errb.String()
		if strings.Contains(all, "\x1b[") || strings.Contains(all, "\r") || strings.Contains(all, "█") {
			t.Errorf("piped output %v carries escapes or a bar:\n%q", extra, all)
		}
		if !strings.Contains(errb.String(), "Uploading 300 files (1.2 MB)") || !strings.Contains(out.String(), "build   unpacked 300 files") || !strings.Contains(out.String(), "Live: https://site.apps.localhost") {
			t.Errorf("piped output %v:\nstdout %q\nstderr %q", extra, out.String(), errb.String())
		}
	}

	// NO_COLOR on a terminal drops both too.
	cmd = exec.Command(toriBin, "deploy", dir, "--app", "site")
	cmd.Env = deployEnv(t, fakeAPI(t).URL, "NO_COLOR=1")
	f, err = pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	tty.Reset()
	io.Copy(&tty, f)
	cmd.Wait()
	if strings.Contains(tty.String(), "\x1b[") || strings.Contains(tty.String(), "█") {
		t.Errorf("NO_COLOR terminal output:\n%q", tty.String())
	}
}

// BenchmarkHelp is how long `tori --help` takes from exec to exit (not run by make test):
//
//	cd cli && go test -run '^$' -bench Help -benchtime 50x ./cmd/tori
func BenchmarkHelp(b *testing.B) {
	// /bin/true beside it separates the machine's own cost of starting a process.
	var best, baseline time.Duration
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := exec.Command(toriBin, "--help").Run(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		total += d
		if best == 0 || d < best {
			best = d
		}
		start = time.Now()
		exec.Command("/bin/true").Run()
		if d := time.Since(start); baseline == 0 || d < baseline {
			baseline = d
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "mean-ms")
	b.ReportMetric(float64(best.Microseconds())/1000, "best-ms")
	b.ReportMetric(float64(baseline.Microseconds())/1000, "true-best-ms")
}
