package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wrkResult is one wrk run: requests per second and latency percentiles in milliseconds.
type wrkResult struct{ rps, p50, p99 float64 }

func (r wrkResult) String() string {
	return fmt.Sprintf("%9.0f req/s  p50 %7.2f ms  p99 %7.2f ms", r.rps, r.p50, r.p99)
}

// runWrk loads scheme://host:port with wrk (2 threads, 64 connections) for duration, going
// round paths. Every connection is dialled at addr whatever the host, so the Host header
// and the TLS server name are the site's own name (as `curl --resolve` does). Any error or
// answer other than 2xx fails the benchmark: a refused request is cheaper than an answer.
func runWrk(b *testing.B, dir, addr, scheme, host string, paths []string, duration string) wrkResult {
	b.Helper()
	ip, port, _ := strings.Cut(addr, ":")
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	script := fmt.Sprintf(`function wrk.resolve(host, service) wrk.addrs = wrk.lookup(%q, %q) end
local paths = { %s }
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format(nil, paths[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %%f %%f %%f %%d %%d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
`, ip, port, strings.Join(quoted, ", "))
	file := filepath.Join(dir, "wrk.lua")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	url := fmt.Sprintf("%s://%s:%s/", scheme, host, port)
	out, err := exec.Command("wrk", "-t2", "-c64", "-d"+duration, "--timeout", "10s", "-s", file, url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk %s: %v\n%s", url, err, out)
	}
	var r wrkResult
	var errs, non2xx int
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			if _, err := fmt.Sscanf(rest, "%f %f %f %d %d", &r.rps, &r.p50, &r.p99, &errs, &non2xx); err != nil {
				b.Fatalf("wrk's result %q: %v", rest, err)
			}
			if errs != 0 || non2xx != 0 || r.rps == 0 {
				b.Fatalf("wrk %s: %d socket errors, %d answers not 2xx:\n%s", url, errs, non2xx, out)
			}
			return r
		}
	}
	b.Fatalf("wrk %s printed no result:\n%s", url, out)
	return r
}
