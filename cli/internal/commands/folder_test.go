package commands

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `tori deploy --dry-run` of a folder with .gitignore'd files, .env, node_modules and a link
// out of the folder: the link is refused with a message naming it, and once it is left out the
// command lists exactly what a deploy would send, one path a line, and sends nothing.
func TestDeployDryRunListsWhatWouldBeSent(t *testing.T) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		if r.Method == http.MethodGet && r.URL.Path == "/api/apps/my-site" {
			w.Write([]byte(`{"id":"a1","slug":"my-site","kind":"static","status":"idle"}`))
			return
		}
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(`{"error":"the dry run called the API"}`))
	}))
	defer srv.Close()

	outside := filepath.Join(t.TempDir(), "host-secret.txt")
	os.WriteFile(outside, []byte("not the site's"), 0o644)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":               "<h1>hi</h1>",
		"assets/site.css":          "h1{}",
		".gitignore":               "build/\n*.log\n",
		"build/out.js":             "built",
		"debug.log":                "log",
		".env":                     "SECRET=1",
		".env.local":               "SECRET=2",
		"node_modules/x/index.js":  "dep",
		".git/config":              "[core]",
		".well-known/security.txt": "Contact: mailto:security@example.com",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "assets", "leak.txt")); err != nil {
		t.Fatal(err)
	}

	code, out, errs := run(t, srv.URL, "", "deploy", dir, "--app", "my-site", "--dry-run")
	if code != 1 || out != "" || !strings.Contains(errs, "assets/leak.txt is a symbolic link to "+outside+", outside the folder") {
		t.Fatalf("a link out of the folder: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}

	os.WriteFile(filepath.Join(dir, ".toriignore"), []byte("assets/leak.txt\n"), 0o644)
	code, out, errs = run(t, srv.URL, "", "deploy", dir, "--app", "my-site", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if want := ".well-known/security.txt\nassets/site.css\nindex.html\n"; out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	for _, line := range []string{"Would send 3 files", "nothing was sent", ".env  (default)", ".env.local  (default)",
		"node_modules/  (default)", ".git/  (default)", "build/  (.gitignore)", "debug.log  (.gitignore)", "assets/leak.txt  (.toriignore)"} {
		if !strings.Contains(errs, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errs)
		}
	}

	code, out, errs = run(t, srv.URL, "", "deploy", dir, "--app", "my-site", "--dry-run", "--json")
	var listed struct {
		Kind  string
		Files []struct {
			Path string
			Size int64
		}
		LeftOut []struct{ Path, Reason string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || listed.Kind != "static" || len(listed.Files) != 3 ||
		listed.Files[2].Path != "index.html" || listed.Files[2].Size != int64(len("<h1>hi</h1>")) || len(listed.LeftOut) != 9 {
		t.Fatalf("--json: exit %d %q %s", code, out, errs)
	}

	for _, c := range calls {
		if c != "GET /api/apps/my-site" {
			t.Fatalf("a dry run made the call %s", c)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("calls %v", calls)
	}
}
