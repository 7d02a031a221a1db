// Package harness runs the control plane as real processes for end-to-end tests: every
// service binary, against a database and a bus namespace of the test's own, reached only
// through the gateway.
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// RepoRoot is the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Binaries builds every service once per test process and returns the folder holding them.
func Binaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "tori-e2e-bin-")
		if buildErr != nil {
			return
		}
		root := RepoRoot()
		// Stamped as scripts/build.sh stamps them, so /healthz names this tree's commit.
		ldflags, err := exec.Command(filepath.Join(root, "scripts", "ldflags.sh")).Output()
		if err != nil {
			buildErr = fmt.Errorf("scripts/ldflags.sh: %v", err)
			return
		}
		services, err := filepath.Glob(filepath.Join(root, "services", "*", "cmd", "*"))
		if err != nil {
			buildErr = err
			return
		}
		for _, dir := range services {
			name := filepath.Base(dir)
			module := filepath.Dir(filepath.Dir(dir))
			cmd := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", filepath.Join(binDir, name), "./cmd/"+name)
			cmd.Dir = module
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("harness: %v", buildErr)
	}
	return binDir
}

// Main runs a test binary's tests and then deletes the folder Binaries built for them (about
// 300 MB), so runs leave none behind in /tmp; each test binary's TestMain is Main.
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
