package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The committed docs/configuration.md is what the config structs say today: a setting added,
// renamed or documented anew without `make docs` fails here.
func TestConfigurationDocMatchesTheCode(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, outputPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == want {
		return
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gotLines) || i < len(wantLines); i++ {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("%s differs from the config structs from line %d:\n  file: %s\n  code: %s\nrun `make docs` (cd tools/configdoc && go run .) and commit the result", outputPath, i+1, g, w)
		}
	}
}

func TestSettingsReadFromTagsAndComments(t *testing.T) {
	s := &scanner{root: ".", mods: modules{}, packages: map[string]*pkgSource{}, shared: map[sharedRef][]group{}}
	p, err := s.pkg("testdata/config")
	if err != nil {
		t.Fatal(err)
	}
	if roots := s.roots(p); !reflect.DeepEqual(roots, []string{"Config"}) {
		t.Fatalf("roots = %v, want [Config]: Nested is held by Config", roots)
	}
	var groups []group
	var shared []sharedRef
	if err := s.walk(p, p.Structs["Config"], &groups, &shared); err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[1].Title != "Nested" || groups[1].Doc == "" {
		t.Fatalf("groups = %+v, want Config's then Nested's with its doc", groups)
	}
	want := []setting{
		{Name: "DEMO_ADDR", Default: "127.0.0.1:9000", HasDefault: true, Doc: "Where the service listens."},
		{Name: "DEMO_ORIGINS", Default: "a,b,c", HasDefault: true, Doc: "The allowed origins, a default with commas."},
		{Name: "DEMO_KEY", Required: "yes", Secret: true, Doc: "The signing key."},
		{Name: "DEMO_DATABASE_URL", Required: "yes", Doc: "The service's role."},
		{Name: "DEMO_BWRAP", Default: "bwrap", HasDefault: true, Doc: "The sandbox's tools."},
		{Name: "DEMO_PASTA", Default: "pasta", HasDefault: true, Doc: "As above."},
		{Name: "DEMO_LONELY"},
		{Name: "DEMO_FIRST", Doc: "First and Second are a pair."},
		{Name: "DEMO_SECOND", Doc: "As above."},
		{Name: "DEMO_SMTP", Doc: "smtp://host:port, kept as written."},
		{Name: "DEMO_TOKEN", Required: "when DEMO_ADDR is set", Doc: "For Vault."},
		{Name: "DEMO_UNNAMED"},
		{Name: "DEMO_CAP", Default: "0", HasDefault: true, Doc: "For tests only, lowers the cap."},
	}
	if !reflect.DeepEqual(groups[0].Settings, want) {
		for i := range max(len(want), len(groups[0].Settings)) {
			var g, w setting
			if i < len(groups[0].Settings) {
				g = groups[0].Settings[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("setting %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}
	nested := groups[1].Settings
	if len(nested) != 1 || nested[0].Name != "DEMO_SIZE" || nested[0].Doc != "Bytes." || nested[0].Default != "0" {
		t.Errorf("Nested's settings = %+v", nested)
	}
}

func TestProseAboveTheMarkerIsKept(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	prose := "# Configuration\n\nWritten by hand.\n\n"
	if err := os.WriteFile(filepath.Join(root, outputPath), []byte(prose+marker+"\nold tables\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc, prose+marker+"\n") || strings.Contains(doc, "old tables") {
		t.Fatalf("generated file does not keep the prose and replace the rest:\n%s", doc)
	}
}

// A process whose settings live outside internal/config (the zone's edge, say) gets a section
// of its own as soon as its struct has env tags; nothing has to list it.
func TestEverySettingsPackageOfAServiceIsFound(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.work", "go 1.26.0\n")
	write(outputPath, "# Configuration\n\n"+marker+"\n")
	write("services/demo/internal/config/config.go", "package config\n\n// Config is demo's.\ntype Config struct {\n\t// Addr is where it listens.\n\tAddr string `env:\"DEMO_ADDR, default=127.0.0.1:1\"`\n}\n")
	write("services/demo/internal/edge/settings.go", "package edge\n\n// Settings are the edge process's.\ntype Settings struct {\n\t// Health is its health address.\n\tHealth string `env:\"DEMO_EDGE_HEALTH_ADDR, default=127.0.0.1:2\"`\n}\n")
	write("services/demo/internal/edge/settings_test.go", "package edge\n\ntype testOnly struct {\n\tX string `env:\"DEMO_TEST_ONLY\"`\n}\n")
	doc, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### demo\n",
		"| `DEMO_ADDR` | `127.0.0.1:1` |  | Where it listens. |",
		"### demo (internal/edge.Settings)\n",
		"| `DEMO_EDGE_HEALTH_ADDR` | `127.0.0.1:2` |  | Its health address. |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("generated file lacks %q:\n%s", want, doc)
		}
	}
	if strings.Contains(doc, "DEMO_TEST_ONLY") {
		t.Errorf("a test file's struct was documented:\n%s", doc)
	}
}
