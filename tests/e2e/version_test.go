package e2e

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// headCommit is the commit of the tree under test, which every stamped binary must name.
func headCommit(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", harness.RepoRoot(), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Every binary, built as scripts/build.sh builds it, answers --version with its name, a
// version and the commit; `tori --version` too.
func TestEveryBinaryReportsItsVersion(t *testing.T) {
	commit := headCommit(t)
	bin := harness.Binaries(t)
	names := []string{"identity", "billing", "apps", "deploys", "logs", "databases", "zoneagent", "gateway"}
	for _, name := range names {
		out, err := exec.Command(filepath.Join(bin, name), "--version").CombinedOutput()
		line := strings.TrimSpace(string(out))
		if err != nil || !strings.HasPrefix(line, name+" ") || !strings.Contains(line, "commit "+commit) || strings.HasPrefix(line, name+" dev ") {
			t.Errorf("%s --version: %v %q; want its name, a stamped version and commit %s", name, err, line, commit)
		}
	}
	out, err := exec.Command(harness.Tori(t), "--version").CombinedOutput()
	if line := strings.TrimSpace(string(out)); err != nil || !strings.HasPrefix(line, "tori version ") || !strings.Contains(line, "commit "+commit) || strings.Contains(line, "version dev ") {
		t.Errorf("tori --version: %v %q", err, line)
	}
}

// Each process's /healthz carries the version and commit it was built with: an operator
// reads which build answers without a shell on the host.
func TestHealthzCarriesVersionAndCommit(t *testing.T) {
	commit := headCommit(t)
	s := defaultStack(t)
	addrs := map[string]string{
		"gateway": "GATEWAY_ADDR", "identity": "IDENTITY_ADDR", "billing": "BILLING_ADDR",
		"apps": "APPS_ADDR", "deploys": "DEPLOYS_ADDR", "logs": "LOGS_ADDR",
		"databases": "DATABASES_ADDR", "zoneagent": "ZONEAGENT_ADDR",
	}
	for name, v := range addrs {
		resp, err := http.Get("http://" + s.Env[v] + "/healthz")
		if err != nil {
			t.Fatalf("%s /healthz: %v", name, err)
		}
		var body struct{ Service, Version, Commit string }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s /healthz: %d %v", name, resp.StatusCode, err)
		}
		if body.Service != name || body.Commit != commit || body.Version == "" || body.Version == "dev" {
			t.Errorf("%s /healthz: %+v; want service %s, a stamped version, commit %s", name, body, name, commit)
		}
	}
}
