package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// sitePart is one static file with a raw Content-Disposition, as a CLI sends it.
type sitePart struct{ name, body string }

func multipartBody(field string, parts []sitePart) (string, []byte) {
	const boundary = "e2e-deploy-boundary"
	var b bytes.Buffer
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=%q; filename=%q\r\n\r\n%s\r\n", boundary, field, p.name, p.body)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, b.Bytes()
}

func deployFiles(t *testing.T, s *harness.Stack, token, slug string, files ...sitePart) *harness.Response {
	t.Helper()
	ct, body := multipartBody("files", files)
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: token, Body: bytes.NewReader(body), Header: map[string]string{"Content-Type": ct}})
}

// sourceTarball packs files (name → content) as a .tar.gz.
func sourceTarball(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func deploySource(t testing.TB, s *harness.Stack, token, slug string, tarball []byte, release string) *harness.Response {
	t.Helper()
	const boundary = "e2e-source-boundary"
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"source\"; filename=\"app.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n", boundary)
	b.Write(tarball)
	b.WriteString("\r\n")
	if release != "" {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"release\"\r\n\r\n%s\r\n", boundary, release)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: token, Body: bytes.NewReader(b.Bytes()),
		Header: map[string]string{"Content-Type": "multipart/form-data; boundary=" + boundary}})
}

func createApp(t testing.TB, s *harness.Stack, token, kind string) string {
	t.Helper()
	r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps", Token: token, Body: map[string]string{"kind": kind}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create app: %d %s", r.Status, r.Body)
	}
	return r.Map(t)["slug"].(string)
}

// waitStatus waits until the deploy reaches want (or any terminal state, which fails).
func waitStatus(t testing.TB, s *harness.Stack, token, slug, id, want string) map[string]any {
	t.Helper()
	var last map[string]any
	harness.Eventually(t, 60*time.Second, "deploy "+id+" "+want, func() bool {
		r := s.Get(t, "/api/apps/"+slug+"/deploys/"+id, token)
		if r.Status != http.StatusOK {
			t.Fatalf("get deploy: %d %s", r.Status, r.Body)
		}
		last = r.Map(t)
		if last["status"] != want && last["status"] != "building" && last["status"] != "releasing" {
			t.Fatalf("deploy %s ended %v (error %v), want %s", id, last["status"], last["error"], want)
		}
		return last["status"] == want
	})
	return last
}

// edgeGet asks the zone's edge for slug's path over HTTPS (the zone's local root). A slug the
// edge does not serve gets no certificate: that is answered as the plain listener answers it.
func edgeGet(t testing.TB, s *harness.Stack, slug, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.EdgeURL(slug+".apps.localhost", path), nil)
	resp, err := s.EdgeClient().Do(req)
	if err != nil && strings.Contains(err.Error(), "remote error: tls:") {
		// No certificate for a name the edge does not serve: ask its plain listener, which
		// answers such a name 404 (and a served one 308).
		return edgeGetPlain(t, s, slug+".apps.localhost", path)
	}
	if err != nil {
		t.Fatalf("edge: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitEdge(t *testing.T, s *harness.Stack, slug, path, want string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, "edge to serve "+want, func() bool {
		status, body := edgeGet(t, s, slug, path)
		return status == http.StatusOK && body == want
	})
}

// objectFiles lists what the deploys service stored: every file of the artifacts bucket in
// the S3 server's folder, unfinished multipart uploads included.
func objectFiles(s *harness.Stack) []string {
	var out []string
	filepath.Walk(filepath.Join(s.ObjectStore.DataDir, harness.ArtifactsBucket), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestStaticDeployRollbackAndDelete(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "static")
	slug := createApp(t, s, a.Token, "static")

	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v1"}, sitePart{"assets/app.js", "js1"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	v1 := r.Map(t)["id"].(string)
	d := waitStatus(t, s, a.Token, slug, v1, "live")
	if d["kind"] != "static" || d["finishedAt"] == nil {
		t.Fatalf("live deploy: %v", d)
	}
	waitEdge(t, s, slug, "/", "v1")
	waitEdge(t, s, slug, "/assets/app.js", "js1")
	// The apps service follows the deploy: the app runs it as its current deploy.
	harness.Eventually(t, 10*time.Second, "the app to show the live deploy", func() bool {
		app := s.Get(t, "/api/apps/"+slug, a.Token).Map(t)
		return app["status"] == "running" && app["currentDeployId"] == v1
	})
	if status, body := edgeGet(t, s, "no-such-app", "/"); status != 404 || body != "not found\n" {
		t.Fatalf("unknown host: %d %q", status, body)
	}

	r = deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v2"})
	v2 := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, v2, "live")
	waitEdge(t, s, slug, "/", "v2")
	if got := s.Get(t, "/api/apps/"+slug+"/deploys/"+v1, a.Token).Map(t)["status"]; got != "superseded" {
		t.Fatalf("v1 is %v", got)
	}

	// Rollback serves the old content again.
	r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + v1 + "/rollback", Token: a.Token})
	if r.Status != http.StatusCreated || r.Map(t)["rollbackOf"] != v1 {
		t.Fatalf("rollback: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "v1")

	var list []map[string]any
	s.Get(t, "/api/apps/"+slug+"/deploys?limit=2", a.Token).JSON(t, &list)
	if len(list) != 2 || list[1]["id"] != v2 {
		t.Fatalf("list: %v", list)
	}

	// Refusals through the gateway leave nothing behind.
	before := len(objectFiles(s))
	for name, files := range map[string][]sitePart{
		"dotdot": {{"../x.html", "x"}}, "absolute": {{"/x.html", "x"}}, "backslash": {{`a\b.html`, "x"}},
	} {
		r := deployFiles(t, s, a.Token, slug, append([]sitePart{{"index.html", "bad"}}, files...)...)
		if r.Status != http.StatusBadRequest || r.Map(t)["code"] != "invalid_path" {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	// Over nestling's 100 MiB, streamed: refused while streaming with the limit and plan.
	ct, head := multipartBody("files", []sitePart{{"index.html", "x"}})
	head = head[:bytes.LastIndex(head, []byte("--e2e-deploy-boundary--"))]
	big := io.MultiReader(bytes.NewReader(head), strings.NewReader("--e2e-deploy-boundary\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.bin\"\r\n\r\n"),
		io.LimitReader(zeros{}, 101<<20), strings.NewReader("\r\n--e2e-deploy-boundary--\r\n"))
	r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token, Body: big, Header: map[string]string{"Content-Type": ct}})
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d %s", r.Status, r.Body)
	}
	if m := r.Map(t); m["code"] != "upload_too_large" || m["limit"] != float64(100<<20) || m["plan"] != "nestling" {
		t.Fatalf("413 body: %v", m)
	}
	if after := len(objectFiles(s)); after != before {
		t.Fatalf("objects %d → %d after refusals", before, after)
	}
	s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &list)
	if len(list) != 3 {
		t.Fatalf("refusals created deploys: %d", len(list))
	}

	// Another account sees nothing of it.
	b := s.NewAccount(t, "other")
	if r := s.Get(t, "/api/apps/"+slug+"/deploys", b.Token); r.Status != http.StatusNotFound {
		t.Fatalf("other account: %d", r.Status)
	}

	// Deleting the app stops serving at once and removes its deploys from every route.
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug, Token: a.Token}); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	// decisions.md: a deleted app is 404 on every service's routes within one second.
	harness.Eventually(t, time.Second, "edge to stop serving", func() bool {
		status, _ := edgeGet(t, s, slug, "/")
		return status == http.StatusNotFound
	})
	harness.Eventually(t, time.Second, "deploys to 404", func() bool {
		return s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).Status == http.StatusNotFound
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

const nodeServer = `
const http = require('http'), fs = require('fs');
http.createServer((req, res) => {
  res.end((process.env.GREETING || 'none') + ' ' + (fs.existsSync('released') ? 'released' : 'unreleased') + ' ' + require('./version.json').v);
}).listen(process.env.PORT, '127.0.0.1');
`

func TestSourceDeployReleaseCancelAndFailure(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "source")
	slug := createApp(t, s, a.Token, "service")
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": "GREETING", "value": "hello-from-env"}}); r.Status != http.StatusCreated {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js", "build": "echo building with $GREETING"})
	src := func(v string, build string) []byte {
		m := manifest
		if build != "" {
			m, _ = json.Marshal(map[string]string{"start": "node server.js", "build": build})
		}
		return sourceTarball(t, map[string]string{"tori.json": string(m), "server.js": nodeServer, "version.json": `{"v":"` + v + `"}`})
	}

	r := deploySource(t, s, a.Token, slug, src("1", ""), "sh -c touch${IFS}released")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	d1 := r.Map(t)
	if d1["kind"] != "source" || len(d1["release"].([]any)) != 3 {
		t.Fatalf("deploy body: %v", d1)
	}
	waitStatus(t, s, a.Token, slug, d1["id"].(string), "live")
	waitEdge(t, s, slug, "/", "hello-from-env released 1")

	// Build output reached the logs service with the environment value masked.
	harness.Eventually(t, 15*time.Second, "the build line in the logs", func() bool {
		var logs struct {
			Entries []struct{ Stream, Message, DeployID string } `json:"entries"`
		}
		s.Get(t, "/api/apps/"+slug+"/logs", a.Token).JSON(t, &logs)
		for _, e := range logs.Entries {
			if strings.Contains(e.Message, "hello-from-env") {
				t.Fatalf("an environment value reached the logs: %+v", e)
			}
			if e.Stream == "build" && e.Message == "building with [redacted]" && e.DeployID == d1["id"] {
				return true
			}
		}
		return false
	})

	// A failing release command leaves the previous revision serving.
	r = deploySource(t, s, a.Token, slug, src("2", ""), "false")
	failed := waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "failed")
	if failed["error"] != "release_failed" {
		t.Fatalf("failed deploy: %v", failed)
	}
	waitEdge(t, s, slug, "/", "hello-from-env released 1")

	// A cancelled building deploy never goes live.
	r = deploySource(t, s, a.Token, slug, src("3", "sleep 2"), "")
	id := r.Map(t)["id"].(string)
	c := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + id + "/cancel", Token: a.Token})
	if c.Status != http.StatusOK || c.Map(t)["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", c.Status, c.Body)
	}
	waitEdge(t, s, slug, "/", "hello-from-env released 1")

	// A newer good revision, then a rollback to the first: it is rebuilt from the same
	// artifact in a fresh tree and serves only because its release command ran again. The
	// newer one is also the marker for the cancelled one: it went through the zone after it,
	// so had the cancelled build been switched to, that would show by now.
	r = deploySource(t, s, a.Token, slug, src("4", ""), "")
	d4 := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, d4, "live")
	waitEdge(t, s, slug, "/", "hello-from-env unreleased 4")
	if got := s.Get(t, "/api/apps/"+slug+"/deploys/"+id, a.Token).Map(t)["status"]; got != "cancelled" {
		t.Fatalf("cancelled deploy is %v", got)
	}
	harness.Eventually(t, 10*time.Second, "currentDeployId to name the marker deploy", func() bool {
		return s.Get(t, "/api/apps/"+slug, a.Token).Map(t)["currentDeployId"] == d4
	})
	r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + d1["id"].(string) + "/rollback", Token: a.Token})
	if r.Status != http.StatusCreated {
		t.Fatalf("rollback: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "hello-from-env released 1")

	// Image deploys need a container runtime this zone does not have.
	r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token,
		Body: map[string]string{"image": "ghcr.io/acme/web@sha256:" + strings.Repeat("ab", 32)}})
	if r.Status != http.StatusCreated {
		t.Fatalf("image deploy: %d %s", r.Status, r.Body)
	}
	img := waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "failed")
	if img["error"] != "image_runtime_unavailable" {
		t.Fatalf("image deploy: %v", img)
	}

	// A crashed zone agent takes its processes with it and, restarted, brings the live
	// revision back from its tree and its environment snapshot.
	s.Kill("zoneagent")
	s.Restart("zoneagent")
	waitEdge(t, s, slug, "/", "hello-from-env released 1")
}

// BenchmarkStaticDeploy measures, on an account moved to flock by the operator command:
//   - the time from the first byte of a 1,000-file, 50 MB static upload to the edge serving
//     the new content;
//   - the peak memory (VmHWM) of the gateway and the deploys service around a 500 MB upload.
//
// Run: go test -run '^$' -bench BenchmarkStaticDeploy -benchtime 1x ./tests/e2e/
func BenchmarkStaticDeploy(b *testing.B) {
	s := harness.Start(b, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
	a := s.NewAccount(b, "bench")
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock"); err != nil {
		b.Fatalf("set-plan: %v\n%s", err, out)
	}
	slug := createApp(b, s, a.Token, "static")
	time.Sleep(time.Second) // the plan_changed event reaches the deploys service
	// What the services reach before any upload: the floor the uploads' figures stand on.
	b.Logf("peak RSS before any upload: gateway %d MB, deploys %d MB", peakKB(b, s, "gateway")/1024, peakKB(b, s, "deploys")/1024)

	for i := 0; i < b.N; i++ {
		marker := fmt.Sprintf("build-%d-%d", i, time.Now().UnixNano())
		start := time.Now()
		r := upload(b, s, a.Token, slug, 1000, 50<<20, marker)
		if r.Status != http.StatusCreated {
			b.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		harness.Eventually(b, 2*time.Minute, "the new site", func() bool {
			status, body := edgeGet(b, s, slug, "/")
			return status == 200 && body == marker
		})
		b.ReportMetric(time.Since(start).Seconds(), "s-to-live/1000-files-50MB")
	}

	before := map[string]int64{"gateway": peakKB(b, s, "gateway"), "deploys": peakKB(b, s, "deploys")}
	r := upload(b, s, a.Token, slug, 1, 500<<20, "big")
	if r.Status != http.StatusCreated {
		b.Fatalf("500 MB deploy: %d %s", r.Status, r.Body)
	}
	for _, name := range []string{"gateway", "deploys"} {
		after := peakKB(b, s, name)
		b.ReportMetric(float64(after)/1024, "MB-peak-rss-"+name)
		b.Logf("%s peak RSS: %d MB before the 500 MB upload, %d MB after", name, before[name]/1024, after/1024)
	}
}

// upload streams a static site of n files totalling size bytes; index.html holds marker.
func upload(b *testing.B, s *harness.Stack, token, slug string, n int, size int64, marker string) *harness.Response {
	b.Helper()
	const boundary = "bench-boundary"
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		fmt.Fprintf(w, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=\"index.html\"\r\n\r\n%s\r\n", boundary, marker)
		per := size / int64(n)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=\"assets/%04d.bin\"\r\n\r\n", boundary, i)
			io.CopyN(w, zeros{}, per)
			w.WriteString("\r\n")
		}
		fmt.Fprintf(w, "--%s--\r\n", boundary)
		w.Flush()
		pw.Close()
	}()
	return s.Do(b, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: token, Body: pr,
		Header: map[string]string{"Content-Type": "multipart/form-data; boundary=" + boundary}})
}

// peakKB reads VmHWM of the stack's process running the named binary.
func peakKB(b *testing.B, s *harness.Stack, name string) int64 {
	b.Helper()
	bin := filepath.Join(harness.Binaries(b), name)
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range procs {
		if target, err := os.Readlink(exe); err != nil || target != bin {
			continue
		}
		status, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb
			}
		}
	}
	b.Fatalf("no running %s", name)
	return 0
}

// On nestling (minScale 0) an idle service naps, the app shows it, and the first request
// wakes it and is answered once it is healthy.
func TestIdleServiceNapsAndWakes(t *testing.T) {
	s := harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000", "ZONE_IDLE_AFTER": "2s"}})
	a := s.NewAccount(t, "nap")
	slug := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"n"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "none unreleased n")
	status := func() any { return s.Get(t, "/api/apps/"+slug, a.Token).Map(t)["status"] }
	harness.Eventually(t, 20*time.Second, "the app to nap", func() bool { return status() == "napping" })
	waitEdge(t, s, slug, "/", "none unreleased n")
	harness.Eventually(t, 10*time.Second, "the app to run again", func() bool { return status() == "running" })
}
