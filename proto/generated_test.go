package proto_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates every contract with the pinned tools that
// `make tools` installs into ../bin and fails when the committed code differs.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	bin, err := filepath.Abs("../bin")
	if err != nil {
		t.Fatal(err)
	}
	buf := filepath.Join(bin, "buf")
	if _, err := os.Stat(buf); err != nil {
		t.Fatalf("buf is not installed in %s (run `make tools`): %v", bin, err)
	}
	out := t.TempDir()
	cmd := exec.Command(buf, "generate", "-o", out)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate: %v\n%s", err, msg)
	}
	want := readTree(t, filepath.Join(out, "gen"))
	got := readTree(t, "gen")
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s is not committed: run `make proto`", name)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s is stale: run `make proto`", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s has no .proto source any more: run `make proto`", name)
		}
	}
	if len(want) == 0 {
		t.Fatal("buf generated nothing")
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
