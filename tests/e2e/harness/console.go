package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	consoleOnce sync.Once
	consoleErr  error
)

// ConsoleDir is the web console's folder (its npm project and Go module).
func ConsoleDir() string { return filepath.Join(RepoRoot(), "console") }

// buildConsole builds the console's page (npm ci when the lockfile is newer than the last
// install, then npm run build) and bin/console embedding it, once per test process.
func buildConsole(t testing.TB, bin string) {
	t.Helper()
	consoleOnce.Do(func() {
		dir := ConsoleDir()
		if _, err := exec.LookPath("npm"); err != nil {
			consoleErr = fmt.Errorf("npm is not installed: the console's tests need Node.js 20 and npm")
			return
		}
		steps := [][]string{{"npm", "run", "--silent", "build"}}
		lock, lerr := os.Stat(filepath.Join(dir, "package-lock.json"))
		installed, ierr := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
		if lerr != nil || ierr != nil || lock.ModTime().After(installed.ModTime()) {
			steps = append([][]string{{"npm", "ci", "--no-audit", "--no-fund"}}, steps...)
		}
		steps = append(steps, []string{"go", "build", "-o", filepath.Join(bin, "console"), "./cmd/console"})
		for _, step := range steps {
			cmd := exec.Command(step[0], step[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				consoleErr = fmt.Errorf("%v: %v\n%s", step, err, out)
				return
			}
		}
	})
	if consoleErr != nil {
		t.Fatalf("harness: console: %v", consoleErr)
	}
}

// StartConsole builds and starts the web console at the stack's CONSOLE_URL, talking to its
// gateway, and returns that URL. It stops with the stack.
func (s *Stack) StartConsole(t testing.TB) string {
	t.Helper()
	buildConsole(t, s.bin)
	s.services = append(s.services, "console")
	s.start("console")
	s.waitHealthy("console", "CONSOLE_ADDR")
	return s.Env["CONSOLE_URL"]
}
