package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tori.dev/pkg/objectstore"
	"tori.dev/tests/e2e/harness"
)

// edgeRaw sends target to the edge exactly as written (no client re-encodes it) and returns
// the answer's status and body.
func edgeRaw(t *testing.T, s *harness.Stack, slug, target string) (int, string) {
	t.Helper()
	conn, err := tls.Dial("tcp", s.EdgeTLS, s.EdgeTLSConfig(slug+".apps.localhost"))
	if err != nil {
		t.Fatalf("edge: %v", err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET "+target+" HTTP/1.1\r\nHost: "+slug+".apps.localhost\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("edge answer to %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// revisionHas reports whether a static revision published in the zone's bucket holds name
// (its manifest lists every file: docs/conventions.md, "Site objects").
func revisionHas(t *testing.T, s *harness.Stack, name string) bool {
	t.Helper()
	bucket := s.ZoneSites()
	var manifests []string
	err := bucket.List(context.Background(), "sites/", func(o objectstore.Info) bool {
		if strings.HasSuffix(o.Key, "/manifest.json") {
			manifests = append(manifests, o.Key)
		}
		return true
	})
	if err != nil {
		t.Fatalf("the zone's bucket: %v", err)
	}
	for _, key := range manifests {
		body, _, err := bucket.Get(context.Background(), key, nil)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var m struct {
			Files map[string]any `json:"files"`
		}
		err = json.NewDecoder(body).Decode(&m)
		body.Close()
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if _, ok := m.Files[name]; ok {
			return true
		}
	}
	return false
}

const securityTxt = "Contact: mailto:security@example.com\n"

// expectOnlyWellKnown checks that of a site's .env, .git/config and .well-known/security.txt
// the edge serves only the last, and answers the others exactly as a missing file, however
// the path is spelt.
func expectOnlyWellKnown(t *testing.T, s *harness.Stack, slug string) {
	t.Helper()
	waitEdge(t, s, slug, "/.well-known/security.txt", securityTxt)
	missingStatus, missingBody := edgeRaw(t, s, slug, "/no-such-file.txt")
	if missingStatus != http.StatusNotFound {
		t.Fatalf("a missing file: %d %q", missingStatus, missingBody)
	}
	for _, target := range []string{"/.env", "/%2Eenv", "/%2eenv", "/a/%2e%2e/.env", "/.well-known/../.env", "//.env",
		"/.git/config", "/.git/", "/%2Egit/config", "/.git%2Fconfig"} {
		if status, body := edgeRaw(t, s, slug, target); status != missingStatus || body != missingBody {
			t.Errorf("GET %s: %d %q, want %d %q as for a missing file", target, status, body, missingStatus, missingBody)
		}
	}
}

// The judged case of the raw API: a static upload may hold dotfiles (nothing valid is
// refused), the zone stores them, and the edge never serves one but .well-known's.
func TestDotfilesUploadedThroughTheAPIAreNotServed(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "dotraw")
	slug := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "home"}, sitePart{".env", "SECRET=raw-api"},
		sitePart{".git/config", "[core]\n"}, sitePart{".well-known/security.txt", securityTxt})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "home")
	if !revisionHas(t, s, ".env") || !revisionHas(t, s, ".git/config") {
		t.Fatal("the raw upload's dotfiles are not in the revision: the edge test below would prove nothing")
	}
	expectOnlyWellKnown(t, s, slug)
}

// The judged case of the command line: `tori deploy` of such a folder sends only what the
// edge would serve, and `--dry-run` refuses a link out of the folder.
func TestDotfilesStayOutOfACLIDeploy(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "dotcli")
	c := newToriCLI(t, s)
	c.deviceFlow(a.Token, "login")
	var app struct{ Slug string }
	c.json(&app, "apps", "create")

	site := writeTree(t, map[string]string{
		"index.html":               "<h1>dotfiles</h1>",
		".env":                     "SECRET=from-the-cli",
		".git/config":              "[core]\n",
		".well-known/security.txt": securityTxt,
		".gitignore":               "drafts/\n",
		"drafts/next.html":         "not yet",
		"node_modules/x/index.js":  "dep",
	})
	outside := filepath.Join(t.TempDir(), "host.txt")
	os.WriteFile(outside, []byte("host file"), 0o644)
	if err := os.Symlink(outside, filepath.Join(site, "host.txt")); err != nil {
		t.Fatal(err)
	}
	code, out, errs := c.run("", "deploy", site, "--app", app.Slug, "--dry-run")
	if code != 1 || out != "" || !strings.Contains(errs, "host.txt is a symbolic link to "+outside+", outside the folder") {
		t.Fatalf("dry run with a link out: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	code, out, errs = c.run("", "deploy", site, "--app", app.Slug)
	if code != 1 || !strings.Contains(errs, "outside the folder") {
		t.Fatalf("deploy with a link out: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	var ds []struct{ ID string }
	c.json(&ds, "deploys", "list", "--app", app.Slug)
	if len(ds) != 0 {
		t.Fatalf("a refused folder made a deploy: %+v", ds)
	}

	os.Remove(filepath.Join(site, "host.txt"))
	if out := c.ok("deploy", site, "--app", app.Slug, "--dry-run"); out != ".well-known/security.txt\nindex.html\n" {
		t.Fatalf("dry run lists %q", out)
	}
	code, out, errs = c.run("", "deploy", site, "--app", app.Slug)
	if code != 0 || !strings.Contains(errs, "Uploading 2 files") || !strings.Contains(errs, "Left out: .env") {
		t.Fatalf("deploy exited %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	waitEdge(t, s, app.Slug, "/", "<h1>dotfiles</h1>")
	if revisionHas(t, s, ".env") || revisionHas(t, s, ".git") || revisionHas(t, s, "drafts") || revisionHas(t, s, "node_modules") {
		t.Fatal("the CLI sent what it should have left out")
	}
	expectOnlyWellKnown(t, s, app.Slug)
}
