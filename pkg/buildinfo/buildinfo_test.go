package buildinfo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestAsked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"-version"}, true},
		{[]string{"version"}, true},
		{nil, false},
		{[]string{"serve"}, false},
		{[]string{"--version", "extra"}, false},
		{[]string{"--versions"}, false},
	} {
		if got := Asked(tc.args); got != tc.want {
			t.Errorf("Asked(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// The flags scripts/ldflags.sh prints really stamp this package's variables: a program built
// with them reports the repository's commit, and one built without says "unknown".
func TestLdflagsStampVersionAndCommit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	flags, err := exec.Command(filepath.Join(root, "scripts", "ldflags.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/ldflags.sh: %v", err)
	}
	dir := t.TempDir()
	build := func(out string, extra ...string) string {
		args := append([]string{"build", "-o", filepath.Join(dir, out)}, extra...)
		cmd := exec.Command("go", append(args, "./testdata/probe")...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		b, err := exec.Command(filepath.Join(dir, out), "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	stamped := build("stamped", "-ldflags", strings.TrimSpace(string(flags)))
	commit := strings.TrimSpace(string(head))
	if !strings.HasPrefix(stamped, "probe ") || !strings.Contains(stamped, "(commit "+commit+",") || strings.Contains(stamped, "probe dev ") {
		t.Fatalf("stamped binary says %q; want version and commit %s", stamped, commit)
	}
	if plain := build("plain"); !strings.HasPrefix(plain, "probe dev (commit unknown,") {
		t.Fatalf("unstamped binary says %q", plain)
	}
}
