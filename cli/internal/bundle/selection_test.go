package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A folder as a developer has it: sources, build output, secrets, dependencies, version
// control, and ignore files at several depths.
var project = map[string]string{
	"index.html":               "home",
	"tori.json":                `{"app":"x"}`,
	"assets/app.js":            "x()",
	"assets/app.js.map":        "{}",
	"debug.log":                "log",
	"dist/bundle.js":           "built",
	"sub/.gitignore":           "*.tmp\n",
	"sub/a.tmp":                "tmp",
	"b.tmp":                    "kept: the nested .gitignore is sub/'s alone",
	"sub/keep.txt":             "k",
	".gitignore":               "# build output\r\n/dist/\n*.log\n*.map\n!.env\n",
	".git/config":              "[core]",
	".git/info/exclude":        "local-notes.txt\n",
	"local-notes.txt":          "mine",
	".env":                     "SECRET=1",
	".env.production":          "SECRET=2",
	".envrc":                   "export A=1",
	".htaccess":                "deny",
	".well-known/security.txt": "Contact: x",
	".well-known/.hidden":      "no",
	"blog/.DS_Store":           "x",
	"blog/post.html":           "post",
	"node_modules/lib/i.js":    "lib",
	"docs/guide.md":            "guide",
	"sub/docs/n.md":            "nested docs",
	".dockerignore":            "# Docker's syntax: rooted\ndocs\n",
}

func TestSelectStaticSite(t *testing.T) {
	dir := tree(t, project)
	sel, err := Select(dir, StaticSite)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{".well-known/security.txt", "assets/app.js", "b.tmp", "blog/post.html", "index.html", "sub/docs/n.md", "sub/keep.txt"}
	wantLeftOut := []string{
		".dockerignore default", ".env default", ".env.production default", ".envrc default", ".git/ default",
		".gitignore default", ".htaccess default", ".well-known/.hidden default", "assets/app.js.map .gitignore",
		"blog/.DS_Store default", "debug.log .gitignore", "dist/ .gitignore", "docs/ .dockerignore",
		"local-notes.txt .gitignore", "node_modules/ default", "sub/.gitignore default", "sub/a.tmp .gitignore",
		"tori.json default",
	}
	check(t, sel, wantFiles, wantLeftOut)
}

func TestSelectServiceSource(t *testing.T) {
	dir := tree(t, project)
	sel, err := Select(dir, ServiceSource)
	if err != nil {
		t.Fatal(err)
	}
	// A service keeps its dotfiles and node_modules (its build decides), never .git or .env*.
	wantFiles := []string{".dockerignore", ".gitignore", ".htaccess", ".well-known/.hidden", ".well-known/security.txt",
		"assets/app.js", "b.tmp", "blog/post.html", "index.html", "node_modules/lib/i.js", "sub/.gitignore",
		"sub/docs/n.md", "sub/keep.txt", "tori.json"}
	wantLeftOut := []string{
		".env default", ".env.production default", ".envrc default", ".git/ default",
		"assets/app.js.map .gitignore", "blog/.DS_Store default", "debug.log .gitignore", "dist/ .gitignore",
		"docs/ .dockerignore", "local-notes.txt .gitignore", "sub/a.tmp .gitignore",
	}
	check(t, sel, wantFiles, wantLeftOut)
}

// A .toriignore has the last word on what is not fixed: it leaves out more, and its `!`
// brings back a default or a .gitignore'd folder; nothing brings back .git or, on a static
// site, a dotfile the edge would not serve.
func TestToriignoreHasTheLastWord(t *testing.T) {
	files := map[string]string{}
	for k, v := range project {
		files[k] = v
	}
	files[".toriignore"] = "!node_modules/\n!dist/\n!.env.production\n!.git/\n!.htaccess\nblog/\n"
	files["sub/.toriignore"] = "keep.txt\n"
	dir := tree(t, files)

	sel, err := Select(dir, StaticSite)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{".well-known/security.txt", "assets/app.js", "b.tmp", "dist/bundle.js", "index.html", "node_modules/lib/i.js", "sub/docs/n.md"}
	wantLeftOut := []string{
		".dockerignore default", ".env default", ".env.production default", ".envrc default", ".git/ default",
		".gitignore default", ".htaccess default", ".toriignore default", ".well-known/.hidden default",
		"assets/app.js.map .gitignore", "blog/ .toriignore", "debug.log .gitignore", "docs/ .dockerignore",
		"local-notes.txt .gitignore", "sub/.gitignore default", "sub/.toriignore default", "sub/a.tmp .gitignore",
		"sub/keep.txt .toriignore", "tori.json default",
	}
	check(t, sel, wantFiles, wantLeftOut)

	sel, err = Select(dir, ServiceSource)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(sel.Files); !slices.Contains(got, ".env.production") || slices.Contains(got, ".env") || slices.Contains(got, ".git/config") || !slices.Contains(got, "dist/bundle.js") {
		t.Fatalf("service files %v", got)
	}
}

// Docker's `!` inside an excluded folder brings a file back, as `docker build` would.
func TestDockerignoreExceptions(t *testing.T) {
	dir := tree(t, map[string]string{"tori.json": "{}", "a/x.txt": "x", "a/y.txt": "y", "b.txt": "b", ".dockerignore": "a\n!a/y.txt\n"})
	sel, err := Select(dir, ServiceSource)
	if err != nil {
		t.Fatal(err)
	}
	check(t, sel, []string{".dockerignore", "a/y.txt", "b.txt", "tori.json"}, []string{"a/x.txt .dockerignore"})
}

func TestSymbolicLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("host secret"), 0o644)
	for _, tc := range []struct {
		name, target string
		err          string   // refused with this in the message, or
		files        []string // sent
		leftOut      []string
	}{
		{"inside.html", "index.html", "", []string{"index.html", "inside.html"}, nil},
		{"deep/up.html", "../index.html", "", []string{"deep/up.html", "index.html"}, nil},
		{"out.txt", outside, "out.txt is a symbolic link to " + outside + ", outside the folder", nil, nil},
		{"up.txt", "../secret.txt", "up.txt is a symbolic link to ../secret.txt, outside the folder", nil, nil},
		{"gone.txt", "missing.txt", "gone.txt is a symbolic link to missing.txt, which does not exist", nil, nil},
		{"config.txt", ".env", "config.txt is a symbolic link to .env, which is left out (default)", nil, nil},
		{"a.txt", "logs/today.log", "a.txt is a symbolic link to logs/today.log, which is left out (.gitignore)", nil, nil},
		{"folder", "deep", "", []string{"index.html"}, []string{"folder link to a folder"}},
		// A link the rules leave out is never followed.
		{"ignored.log", outside, "", []string{"index.html"}, []string{"ignored.log .gitignore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"index.html": "home", ".env": "S=1", "logs/today.log": "l", ".gitignore": "*.log\nlogs/\n"})
			os.MkdirAll(filepath.Join(dir, "deep"), 0o755)
			os.WriteFile(filepath.Join(dir, "..", "secret.txt"), []byte("next to the folder"), 0o644)
			os.Symlink(tc.target, filepath.Join(dir, tc.name))
			sel, err := Select(dir, StaticSite)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check(t, sel, tc.files, append(tc.leftOut, ".env default", ".gitignore default", "logs/ .gitignore"))
		})
	}
}

// The folder named may itself be a link (a `current` symlink to a build).
func TestSelectThroughALinkedFolder(t *testing.T) {
	dir := tree(t, map[string]string{"index.html": "home", ".env": "S=1"})
	link := filepath.Join(t.TempDir(), "site")
	os.Symlink(dir, link)
	sel, err := Select(link, StaticSite)
	if err != nil {
		t.Fatal(err)
	}
	check(t, sel, []string{"index.html"}, []string{".env default"})
}

func check(t *testing.T, sel Selection, files, leftOut []string) {
	t.Helper()
	if got := paths(sel.Files); !reflect.DeepEqual(got, orEmpty(files)) {
		t.Errorf("files\n got %q\nwant %q", got, files)
	}
	var got []string
	for _, l := range sel.LeftOut {
		got = append(got, l.Path+" "+l.Reason)
	}
	want := append([]string(nil), leftOut...)
	slices.Sort(want)
	if !reflect.DeepEqual(orEmpty(got), orEmpty(want)) {
		t.Errorf("left out\n got %q\nwant %q", got, want)
	}
}

func paths(fs []File) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
