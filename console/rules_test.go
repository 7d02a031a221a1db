package console

import (
	"os"
	"os/exec"
	"testing"
)

// TestFolderDropRules runs the page's own table tests (`npm test`): what a folder drop sends
// (scripts/select-site.test.mjs) and what the Metrics tab and Drains section make of the
// API's answers (scripts/metrics.test.mjs). They are TypeScript, so Node runs them; the suite
// installs Node's packages first (scripts/ensure-browser.sh).
func TestFolderDropRules(t *testing.T) {
	if _, err := os.Stat("node_modules/ignore"); err != nil {
		t.Fatal("the console's npm packages are missing: run scripts/ensure-browser.sh (npm ci in console/)")
	}
	tests := []string{"scripts/select-site.test.mjs", "scripts/metrics.test.mjs"}
	out, err := exec.Command("node", append([]string{"--test"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %v: %v\n%s", tests, err, out)
	}
}
