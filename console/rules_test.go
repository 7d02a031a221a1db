package console

import (
	"os"
	"os/exec"
	"testing"
)

// TestFolderDropRules runs the page's own table tests of what a folder drop sends
// (scripts/select-site.test.mjs, `npm test`): the rules are TypeScript, so Node runs them;
// the suite installs Node's packages first (scripts/ensure-browser.sh).
func TestFolderDropRules(t *testing.T) {
	if _, err := os.Stat("node_modules/ignore"); err != nil {
		t.Fatal("the console's npm packages are missing: run scripts/ensure-browser.sh (npm ci in console/)")
	}
	out, err := exec.Command("node", "--test", "scripts/select-site.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test scripts/select-site.test.mjs: %v\n%s", err, out)
	}
}
