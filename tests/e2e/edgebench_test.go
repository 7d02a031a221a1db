package e2e

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// BenchmarkEdgeAgainstCaddy is `make bench-edge` (issue 32): the zone's edge, which every
// visitor of a customer's app goes through, against Caddy on the same machine, the same files
// and the same app, in one run, the two taking turns:
//   - a static site of 1,000 files (testdata written by writeBenchSite), deployed through the
//     API and served by the edge from the object store through its cache, against Caddy's
//     file_server on the same files on disk; wrk on one small page, then round the 100 kB
//     images;
//   - testdata/edgeapp deployed from source as a service app and reached through the edge
//     (its sandbox and the sandbox's network included), against the binary the zone built, run
//     as a plain process behind Caddy's reverse_proxy;
//   - all of it over plain HTTP, then over HTTPS: the zone agent restarted with its TLS
//     listener and its local CA, and Caddy given a certificate signed by that same root.
//
// Each case prints every run's figures and a line `ratio <what> Tori/Caddy: throughput <n>x,
// p99 <n>x` of the medians; over plain HTTP the edge alone then runs every case with
// EDGE_METRICS off and on, alternating, and prints `counting cost: X% of throughput`. Nothing is asserted of the figures: the targets are read
// from them. EDGE_BENCH_DURATION (each wrk run, default 10s) and EDGE_BENCH_ROUNDS (default
// 3) set the length; CADDY_BIN is scripts/caddy-build.sh's binary. EDGE_BENCH_PROFILE_DIR
// (make bench-edge PROFILE_DIR=dir) runs the zone agent with its profile server and writes a
// CPU profile of it for each of Tori's runs (<transport>-<case>-<round>.cpu.pprof).
//
// Run: make bench-edge (go test -run '^$' -bench BenchmarkEdgeAgainstCaddy -benchtime 1x -v .)
func BenchmarkEdgeAgainstCaddy(b *testing.B) {
	caddy := os.Getenv("CADDY_BIN")
	if caddy == "" {
		b.Fatal("CADDY_BIN is not set: make bench-edge builds Caddy once (scripts/caddy-build.sh) and sets it")
	}
	duration := cmp.Or(os.Getenv("EDGE_BENCH_DURATION"), "10s")
	rounds, err := strconv.Atoi(cmp.Or(os.Getenv("EDGE_BENCH_ROUNDS"), "3"))
	if err != nil || rounds < 1 {
		b.Fatalf("EDGE_BENCH_ROUNDS=%q: want a count of at least 1", os.Getenv("EDGE_BENCH_ROUNDS"))
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Fatal("wrk is not installed: make wrk")
	}

	// Plain HTTP first: with its TLS listener off the edge serves http:// rather than
	// redirecting it. LOG_LEVEL info: neither side logs a request, and debug is a test's level.
	s := harness.Start(b, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000", "EDGE_TLS_ADDR": "off", "LOG_LEVEL": "info",
	}})
	prof := edgeProfiler{dir: os.Getenv("EDGE_BENCH_PROFILE_DIR")}
	if prof.dir != "" {
		// The zone agent alone gets a profile server (every service reads PROFILE_ADDR).
		prof.addr = testinfra.FreeAddr(b)
		s.Stop("zoneagent")
		s.Env["PROFILE_ADDR"] = prof.addr
		s.Restart("zoneagent")
	}
	a := s.NewAccount(b, "edgebench")
	// flock, the largest plan: the site's size fits, and the app gets its most CPU.
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock"); err != nil {
		b.Fatalf("set-plan: %v\n%s", err, out)
	}
	harness.Eventually(b, 10*time.Second, "flock to reach the account", func() bool {
		return s.Get(b, "/api/account", a.Token).Map(b)["plan"] == "flock"
	})

	work := b.TempDir()
	site := writeBenchSite(b, filepath.Join(work, "site"))
	staticSlug := createApp(b, s, a.Token, "static")
	waitLive(b, s, a.Token, staticSlug, site.deploy(b, s, a.Token, staticSlug))
	appSlug := createApp(b, s, a.Token, "service")
	waitLive(b, s, a.Token, appSlug, deploySourceClearCache(b, s, a.Token, appSlug, edgeAppSource(b), false))

	// The plain process: the very binary the zone built, outside any sandbox.
	appAddr := testinfra.FreeAddr(b)
	_, appPort, _ := strings.Cut(appAddr, ":")
	startBenchProcess(b, "edgeapp", exec.Command(builtBinary(b, s.Env["ZONE_APPS_DIR"], "edgeapp", work)), work, "PORT="+appPort)

	staticHost, appHost := staticSlug+"."+s.Env["APPS_DOMAIN"], appSlug+"."+s.Env["APPS_DOMAIN"]
	cases := []edgeCase{
		{"static small file", staticHost, []string{site.page}},
		{"static 100 kB files", staticHost, site.imgs},
		{"service app", appHost, []string{"/"}},
	}
	caddySites := []caddySite{
		{staticHost, "root * " + site.dir + "\n\tfile_server"},
		{appHost, "reverse_proxy " + appAddr},
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench-edge: wrk -t2 -c64 -d%s, %d rounds alternating, %d cores, load average %s\n",
		duration, rounds, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))

	caddyHTTP := testinfra.FreeAddr(b)
	startCaddy(b, caddy, caddyHTTP, "", "", caddySites)
	plain := [2]edgeTarget{{"Tori", "http", s.Env["EDGE_ADDR"], nil}, {"Caddy", "http", caddyHTTP, nil}}
	for _, t := range plain {
		t.warm(b, site, staticHost, appHost)
	}
	runEdgeRounds(b, work, "http", rounds, duration, cases, plain, prof)
	// What counting the customer's requests costs (issue 40): the edge with EDGE_METRICS off
	// and on, alternating (edgebench_counting_test.go).
	runCountingRounds(b, s, work, "http", rounds, duration, cases, site, staticHost, appHost)

	// HTTPS: the zone agent again, now with its TLS listener and its local CA (make run's
	// default), and Caddy with a certificate from that CA's root for both names.
	s.Stop("zoneagent")
	s.EdgeTLS = testinfra.FreeAddr(b)
	s.Env["EDGE_TLS_ADDR"] = s.EdgeTLS
	s.Restart("zoneagent")
	roots := s.EdgeRoots()
	cert, key := signLeaf(b, filepath.Join(s.DataDir, "tls"), work, staticHost, appHost)
	caddyTLS := testinfra.FreeAddr(b)
	startCaddy(b, caddy, caddyTLS, cert, key, caddySites)
	secure := [2]edgeTarget{{"Tori", "https", s.EdgeTLS, roots}, {"Caddy", "https", caddyTLS, roots}}
	for _, t := range secure {
		t.warm(b, site, staticHost, appHost)
	}
	runEdgeRounds(b, work, "https", rounds, duration, cases, secure, prof)
}

// edgeCase is what wrk asks for: paths, gone round, of the site named host.
type edgeCase struct {
	what  string
	host  string
	paths []string
}

// edgeTarget is one side: Tori's edge or Caddy, at addr over scheme (roots: whom to trust).
type edgeTarget struct {
	name, scheme, addr string
	roots              *x509.CertPool
}

// runEdgeRounds runs every case on both targets, rounds times, the first to go swapping each
// round, and prints each run and then each case's ratio of the medians.
func runEdgeRounds(b *testing.B, dir, transport string, rounds int, duration string, cases []edgeCase, targets [2]edgeTarget, prof edgeProfiler) {
	b.Helper()
	runs := map[string][2][]wrkResult{}
	for round := 1; round <= rounds; round++ {
		order := []int{0, 1}
		if round%2 == 0 {
			order = []int{1, 0}
		}
		for _, c := range cases {
			got := runs[c.what]
			for _, i := range order {
				t := targets[i]
				var done func()
				if i == 0 {
					done = prof.start(b, fmt.Sprintf("%s-%s-%d", transport, c.what, round), duration)
				}
				r := runWrk(b, dir, t.addr, t.scheme, c.host, c.paths, duration)
				if done != nil {
					done()
				}
				fmt.Printf("%-5s %-20s round %d  %-5s %s\n", transport, c.what, round, t.name, r)
				got[i] = append(got[i], r)
			}
			runs[c.what] = got
		}
	}
	for _, c := range cases {
		tori, caddy := median(runs[c.what][0]), median(runs[c.what][1])
		fmt.Printf("%-5s %-20s median    Tori  %s\n%-5s %-20s median    Caddy %s\n", transport, c.what, tori, transport, c.what, caddy)
		fmt.Printf("ratio %s over %s Tori/Caddy: throughput %.2fx, p99 %.2fx\n", c.what, transport, tori.rps/caddy.rps, tori.p99/caddy.p99)
	}
}

// median takes each figure's median over the runs on its own.
func median(rs []wrkResult) wrkResult {
	mid := func(get func(wrkResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return wrkResult{
		rps: mid(func(r wrkResult) float64 { return r.rps }),
		p50: mid(func(r wrkResult) float64 { return r.p50 }),
		p99: mid(func(r wrkResult) float64 { return r.p99 }),
	}
}

// client dials the target for any name, so URLs carry the site's own name (Host and SNI).
func (t edgeTarget) client() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, "tcp", t.addr)
			},
			TLSClientConfig: &tls.Config{RootCAs: t.roots},
		},
	}
}

// warm asks the target for every file of the site once, checking each answer's size against
// the file on disk (both sides must serve the same bytes), and for the app's page: each
// side's cache (the edge's, the kernel's page cache for Caddy) holds the site before wrk runs.
func (t edgeTarget) warm(b *testing.B, site *benchSite, staticHost, appHost string) {
	b.Helper()
	c := t.client()
	_, port, _ := strings.Cut(t.addr, ":")
	get := func(host, path string) (int, []byte, error) {
		resp, err := c.Get(t.scheme + "://" + host + ":" + port + path)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, body, err
	}
	// The first answers may wait for a restarted zone agent's app and a first certificate.
	harness.Eventually(b, 2*time.Minute, t.name+" to serve both sites over "+t.scheme, func() bool {
		s1, _, _ := get(staticHost, site.page)
		s2, body, _ := get(appHost, "/")
		return s1 == http.StatusOK && s2 == http.StatusOK && string(body) == "hello from edgeapp\n"
	})
	for path, size := range site.sizes {
		status, body, err := get(staticHost, path)
		if err != nil || status != http.StatusOK || int64(len(body)) != size {
			b.Fatalf("%s %s: status %d, %d bytes of %d, %v", t.name, path, status, len(body), size, err)
		}
	}
}

// waitLive waits until the deploy r created is live.
func waitLive(b *testing.B, s *harness.Stack, token, slug string, r *harness.Response) {
	b.Helper()
	if r.Status != http.StatusCreated {
		b.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	id := r.Map(b)["id"].(string)
	harness.Eventually(b, 10*time.Minute, "deploy "+id+" live", func() bool {
		d := s.Get(b, "/api/apps/"+slug+"/deploys/"+id, token).Map(b)
		if d["status"] == "failed" || d["status"] == "cancelled" {
			b.Fatalf("deploy %s ended %v (%v)", id, d["status"], d["error"])
		}
		return d["status"] == "live"
	})
}

// edgeAppSource is testdata/edgeapp as a source tarball: go.mod and main.go, which the zone
// builds with `go build -o bin/edgeapp .` (no manifest).
func edgeAppSource(b *testing.B) []byte {
	b.Helper()
	files := map[string]string{}
	for _, name := range []string{"go.mod", "main.go"} {
		body, err := os.ReadFile(filepath.Join("testdata", "edgeapp", name))
		if err != nil {
			b.Fatal(err)
		}
		files[name] = string(body)
	}
	return sourceTarball(b, files)
}

// builtBinary copies the zone's build of bin/<name> (found in the zone's apps folder) into
// dir, so the plain process runs the very same binary as the sandboxed one.
func builtBinary(b *testing.B, appsDir, name, dir string) string {
	b.Helper()
	var found string
	filepath.WalkDir(appsDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() == name && filepath.Base(filepath.Dir(p)) == "bin" {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		b.Fatalf("no bin/%s under the zone's apps folder %s", name, appsDir)
	}
	out := filepath.Join(dir, name)
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err == nil {
		err = copyFile(f, found)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		b.Fatalf("copy %s: %v", found, err)
	}
	return out
}
