package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	toriOnce sync.Once
	toriPath string
	toriErr  error
)

// Tori builds the command-line client (module cli/) once per test process and returns its path.
func Tori(t testing.TB) string {
	t.Helper()
	toriOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tori-e2e-cli-")
		if err != nil {
			toriErr = err
			return
		}
		toriPath = filepath.Join(dir, "tori")
		// Stamped as scripts/build.sh stamps it: `tori --version` names this tree's commit.
		ldflags, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "ldflags.sh"), "tori.dev/cli/internal/commands").Output()
		if err != nil {
			toriErr = fmt.Errorf("scripts/ldflags.sh: %v", err)
			return
		}
		cmd := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", toriPath, "./cmd/tori")
		cmd.Dir = filepath.Join(RepoRoot(), "cli")
		if out, err := cmd.CombinedOutput(); err != nil {
			toriErr = fmt.Errorf("build tori: %v\n%s", err, out)
		}
	})
	if toriErr != nil {
		t.Fatalf("harness: %v", toriErr)
	}
	return toriPath
}
