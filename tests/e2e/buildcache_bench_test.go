package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// BenchmarkBuildCache is issue 30's build-cache figure (`make bench-builds`): the Node
// service of testdata/buildbench (express pinned by its lockfile, `npm ci` in tori.json's
// build) deployed to a new app, then again with one small dependency added, then once more
// with clearCache. The first build fills the app's cache from the npm registry; the second
// takes every package but the new one from the cache; the third starts from an empty cache
// again. It prints each deploy's time from the request to live and npm's own time for
// `npm ci`. The issue wants the second build at most half the first. A benchmark, not a
// timed test: the figures go to docs/performance.md, nothing is asserted of them.
//
// npm reaches the registry from inside the sandbox as the host does, the host's DNS resolver
// included (h25-builds lets the sandbox reach it on port 53 where it sits on a private
// address, as it does on this project's machine).
//
// Run: go test -count=1 -run '^$' -bench BenchmarkBuildCache -benchtime 1x ./tests/e2e/
func BenchmarkBuildCache(b *testing.B) {
	s := harness.Start(b, harness.Options{})
	for i := 0; i < b.N; i++ {
		a := s.NewAccount(b, "buildcache")
		slug := createApp(b, s, a.Token, "service")
		first := deployBench(b, s, a.Token, slug, benchSource(b, ""), false, "express 4.21.2 none")
		second := deployBench(b, s, a.Token, slug, benchSource(b, ".with-dep"), false, "express 4.21.2 is-number")
		cleared := deployBench(b, s, a.Token, slug, benchSource(b, ".with-dep"), true, "express 4.21.2 is-number")
		b.Logf("first build (empty cache):        npm ci %6.2f s, request to live %6.2f s", first.npm.Seconds(), first.live.Seconds())
		b.Logf("second build (+1 dependency):     npm ci %6.2f s, request to live %6.2f s (%.2f× the first's npm ci)",
			second.npm.Seconds(), second.live.Seconds(), second.npm.Seconds()/first.npm.Seconds())
		b.Logf("third build (clearCache: true):   npm ci %6.2f s, request to live %6.2f s", cleared.npm.Seconds(), cleared.live.Seconds())
		b.ReportMetric(first.npm.Seconds(), "s-npm-ci-first")
		b.ReportMetric(second.npm.Seconds(), "s-npm-ci-second")
		b.ReportMetric(cleared.npm.Seconds(), "s-npm-ci-cleared")
		b.ReportMetric(first.live.Seconds(), "s-to-live-first")
		b.ReportMetric(second.live.Seconds(), "s-to-live-second")
	}
}

// benchSource packs testdata/buildbench; variant ".with-dep" takes the package.json and
// lockfile with the added dependency.
func benchSource(b *testing.B, variant string) []byte {
	b.Helper()
	dir := filepath.Join("testdata", "buildbench")
	files := map[string]string{}
	for name, from := range map[string]string{
		"tori.json": "tori.json", "server.js": "server.js",
		"package.json": "package" + variant + ".json", "package-lock.json": "package-lock" + variant + ".json",
	} {
		body, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			b.Fatal(err)
		}
		files[name] = string(body)
	}
	return sourceTarball(b, files)
}

type buildTimes struct{ npm, live time.Duration }

// deployBench deploys a source tarball (with clearCache when asked), waits until the edge
// answers want, and reads npm's time for `npm ci` from the deploy's build output.
func deployBench(b *testing.B, s *harness.Stack, token, slug string, tarball []byte, clearCache bool, want string) buildTimes {
	b.Helper()
	start := time.Now()
	r := deploySourceClearCache(b, s, token, slug, tarball, clearCache)
	if r.Status != http.StatusCreated {
		b.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	id := r.Map(b)["id"].(string)
	harness.Eventually(b, 10*time.Minute, "deploy "+id+" live", func() bool {
		d := s.Get(b, "/api/apps/"+slug+"/deploys/"+id, token).Map(b)
		if d["status"] == "failed" || d["status"] == "cancelled" {
			b.Fatalf("deploy %s ended %v (%v):\n%s", id, d["status"], d["error"], strings.Join(buildLines(b, s, token, slug, id), "\n"))
		}
		return d["status"] == "live"
	})
	live := time.Since(start)
	harness.Eventually(b, 30*time.Second, "the edge to answer "+want, func() bool {
		status, body := edgeGet(b, s, slug, "/")
		return status == http.StatusOK && body == want
	})
	var npm time.Duration
	harness.Eventually(b, 30*time.Second, "npm's time in the build output", func() bool {
		for _, l := range buildLines(b, s, token, slug, id) {
			if m := npmAdded.FindStringSubmatch(l); m != nil {
				npm = npmDuration(b, m[1])
				return true
			}
		}
		return false
	})
	return buildTimes{npm: npm, live: live}
}

// npmAdded is npm ci's summary line: "added 69 packages in 4s" (ms below a second, "1m"
// and so on above a minute).
var npmAdded = regexp.MustCompile(`added \d+ packages? in ([0-9.]+(?:ms|s|m|h)(?:[0-9.]+(?:ms|s))?)`)

func npmDuration(b *testing.B, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		b.Fatalf("npm's time %q: %v", s, err)
	}
	return d
}

// buildLines are the deploy's build output lines from the app's logs.
func buildLines(b *testing.B, s *harness.Stack, token, slug, deployID string) []string {
	var logs struct {
		Entries []struct{ Stream, Message, DeployID string } `json:"entries"`
	}
	s.Get(b, "/api/apps/"+slug+"/logs", token).JSON(b, &logs)
	var out []string
	for _, e := range logs.Entries {
		if e.DeployID == deployID && (e.Stream == "build" || e.Stream == "system") {
			out = append(out, e.Stream+": "+e.Message)
		}
	}
	return out
}

// deploySourceClearCache is deploySource with the clearCache part when asked.
func deploySourceClearCache(tb testing.TB, s *harness.Stack, token, slug string, tarball []byte, clearCache bool) *harness.Response {
	tb.Helper()
	const boundary = "e2e-source-boundary"
	var body bytes.Buffer
	fmt.Fprintf(&body, "--%s\r\nContent-Disposition: form-data; name=\"source\"; filename=\"app.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n", boundary)
	body.Write(tarball)
	body.WriteString("\r\n")
	if clearCache {
		fmt.Fprintf(&body, "--%s\r\nContent-Disposition: form-data; name=\"clearCache\"\r\n\r\ntrue\r\n", boundary)
	}
	fmt.Fprintf(&body, "--%s--\r\n", boundary)
	return s.Do(tb, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: token, Body: bytes.NewReader(body.Bytes()),
		Header: map[string]string{"Content-Type": "multipart/form-data; boundary=" + boundary}})
}
