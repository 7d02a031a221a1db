package bundle

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tree(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	return dir
}

func TestStaticUploadHasOnePartPerFileWithItsPath(t *testing.T) {
	dir := tree(t, map[string]string{"index.html": "<h1>hi</h1>", "assets/app.js": "x()", "tori.json": `{"app":"a"}`, ".git/HEAD": "ref"})
	sel, err := Select(dir, StaticSite)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Files) != 2 {
		t.Fatalf("files %v", sel.Files)
	}
	up, err := Static(dir, sel)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := up.Open()
	raw, _ := io.ReadAll(body)
	if int64(len(raw)) != up.Length {
		t.Fatalf("length %d, announced %d", len(raw), up.Length)
	}
	// The raw header keeps the folder (Go's FileName() would strip it).
	if !strings.Contains(string(raw), `filename="assets/app.js"`) {
		t.Fatalf("no raw path in %q", raw)
	}
	_, params, _ := mime.ParseMediaType(up.ContentType)
	mr := multipart.NewReader(strings.NewReader(string(raw)), params["boundary"])
	got := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.FormName() != "files" {
			t.Fatalf("part %q", p.FormName())
		}
		b, _ := io.ReadAll(p)
		got[p.FileName()] = string(b)
	}
	if got["index.html"] != "<h1>hi</h1>" || got["app.js"] != "x()" {
		t.Fatalf("parts %v", got)
	}
}

func TestSourceKeepsItsManifestAndPacksTheFolder(t *testing.T) {
	dir := tree(t, map[string]string{"tori.json": "{}", ".toriignore": "tori.json"})
	sel, err := Select(dir, ServiceSource)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Source(dir, sel, SourceOptions{}); err == nil || !strings.Contains(err.Error(), "tori.json is left out") {
		t.Fatalf("a left-out manifest: err %v", err)
	}
	// Without a manifest the folder goes as it is: the zone detects how to build it.
	dir = tree(t, map[string]string{"package.json": `{"scripts":{"start":"node s.js"}}`})
	if sel, err = Select(dir, ServiceSource); err != nil {
		t.Fatal(err)
	}
	if _, _, cleanup, err := Source(dir, sel, SourceOptions{}); err != nil {
		t.Fatalf("a source without tori.json: %v", err)
	} else {
		cleanup()
	}
	dir = tree(t, map[string]string{"tori.json": `{"start":"x"}`, "src/main.py": "print(1)", ".env": "SECRET=1"})
	sel, err = Select(dir, ServiceSource)
	if err != nil {
		t.Fatal(err)
	}
	up, size, cleanup, err := Source(dir, sel, SourceOptions{Release: "python3 migrate.py", ClearCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	body, _ := up.Open()
	raw, _ := io.ReadAll(body)
	if int64(len(raw)) != up.Length || size <= 0 {
		t.Fatalf("length %d, announced %d", len(raw), up.Length)
	}
	_, params, _ := mime.ParseMediaType(up.ContentType)
	mr := multipart.NewReader(strings.NewReader(string(raw)), params["boundary"])
	src, _ := mr.NextPart()
	zr, err := gzip.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "src/main.py,tori.json" {
		t.Fatalf("tar holds %v", names)
	}
	rel, _ := mr.NextPart()
	b, _ := io.ReadAll(rel)
	if rel.FormName() != "release" || string(b) != "python3 migrate.py" {
		t.Fatalf("release part %q %q", rel.FormName(), b)
	}
	clear, _ := mr.NextPart()
	b, _ = io.ReadAll(clear)
	if clear.FormName() != "clearCache" || string(b) != "true" {
		t.Fatalf("clearCache part %q %q", clear.FormName(), b)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Fatalf("a part after clearCache: %v", err)
	}

	// Without options, the source is the only part.
	up, _, cleanup2, err := Source(dir, sel, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup2()
	body, _ = up.Open()
	raw, _ = io.ReadAll(body)
	_, params, _ = mime.ParseMediaType(up.ContentType)
	mr = multipart.NewReader(strings.NewReader(string(raw)), params["boundary"])
	if p, _ := mr.NextPart(); p.FormName() != "source" {
		t.Fatalf("first part %q", p.FormName())
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Fatalf("a part besides the source: %v", err)
	}

	// A preview's fields follow the source, one part each, in order; the length announced
	// is what is sent.
	up, _, cleanup3, err := Source(dir, sel, SourceOptions{Fields: []Field{{"name", "pr-12"}, {"env", `{"FEATURE_X":"on"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup3()
	body, _ = up.Open()
	raw, _ = io.ReadAll(body)
	if int64(len(raw)) != up.Length {
		t.Fatalf("length %d, announced %d", len(raw), up.Length)
	}
	_, params, _ = mime.ParseMediaType(up.ContentType)
	mr = multipart.NewReader(strings.NewReader(string(raw)), params["boundary"])
	var got []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		if p.FormName() != "source" {
			got = append(got, p.FormName()+"="+string(b))
		} else {
			got = append(got, "source")
		}
	}
	if strings.Join(got, " ") != `source name=pr-12 env={"FEATURE_X":"on"}` {
		t.Fatalf("parts %q", got)
	}
}
