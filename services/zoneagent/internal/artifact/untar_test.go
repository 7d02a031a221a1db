package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, body, link string
	typ              byte
}

func archive(t *testing.T, gz bool, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	var tw *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(zw)
	} else {
		tw = tar.NewWriter(&buf)
	}
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	if zw != nil {
		zw.Close()
	}
	return &buf
}

func TestUnpackKeepsTree(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "site")
	n, err := Unpack(archive(t, true, entry{name: "index.html", body: "hi"}, entry{name: "a/b/c.txt", body: "c"},
		entry{name: "a/link", link: "b/c.txt", typ: tar.TypeSymlink}), true, dst, Limits{MaxBytes: 100, MaxEntries: 10, AllowSymlinks: true})
	if err != nil || n != 2 {
		t.Fatalf("%d %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a/link")); string(b) != "c" {
		t.Fatalf("link reads %q", b)
	}
}

// Hostile archives are refused and leave nothing behind.
func TestUnpackRefusesEscapes(t *testing.T) {
	sym := func(name, target string) entry { return entry{name: name, link: target, typ: tar.TypeSymlink} }
	for _, tc := range []struct {
		name    string
		entries []entry
		says    string // what the error tells the customer
	}{
		{"dotdot path", []entry{{name: "../evil", body: "x"}}, `path "../evil"`},
		{"nested dotdot path", []entry{{name: "a/../../evil", body: "x"}}, `path "a/../../evil"`},
		{"absolute path", []entry{{name: "/etc/evil", body: "x"}}, `path "/etc/evil"`},
		{"dotdot link", []entry{sym("out", "../../etc")}, "leaves the tree"},
		{"absolute link", []entry{sym("out", "/etc/passwd")}, "only relative links"},
		{"link to /dev/zero", []entry{sym("tori.json", "/dev/zero")}, "only relative links"},
		{"write through link", []entry{sym("d", "."), sym("e", "d/../..")}, "leaves the tree"},
		// Each link alone stays inside as text; followed through the tree, `e` names its parent.
		{"chain a→b→../..", []entry{sym("x/up", ".."), sym("e", "x/up/..")}, `link "e" leads out of the tree`},
		{"longer chain", []entry{sym("x/up", ".."), sym("e", "x/up/x/up/x/up/..")}, `link "e" leads out of the tree`},
		// The link that makes the chain escape comes after the one that uses it.
		{"chain made later", []entry{sym("e", "x/up/.."), sym("x/up", "..")}, `link "e" leads out of the tree`},
		{"chain through a folder link", []entry{sym("a", "b"), sym("b", "c/.."), sym("c", "x/up"), sym("x/up", "..")}, "leads out of the tree"},
		{"link loop", []entry{sym("a", "b"), sym("b", "a")}, "too many levels"},
		{"hard link outside", []entry{{name: "h", link: "/etc/passwd", typ: tar.TypeLink}}, "a hard link"},
		{"hard link inside", []entry{{name: "f", body: "x"}, {name: "h", link: "f", typ: tar.TypeLink}}, "a hard link"},
		{"fifo", []entry{{name: "tori.json", typ: tar.TypeFifo}}, `"tori.json" is a FIFO`},
		{"char device", []entry{{name: "zero", typ: tar.TypeChar}}, "a character device"},
		{"block device", []entry{{name: "sda", typ: tar.TypeBlock}}, "a block device"},
		{"too many entries", []entry{{name: "1"}, {name: "2"}, {name: "3"}, {name: "4"}, {name: "5"}}, "more than 4 entries"},
		{"too large", []entry{{name: "big", body: "0123456789abcdef"}}, "more than 10 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "tree")
			_, err := Unpack(archive(t, false, tc.entries...), false, dst, Limits{MaxBytes: 10, MaxEntries: 4, AllowSymlinks: true})
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want ErrUnsafe saying %q", err, tc.says)
			}
			if strings.Contains(err.Error(), parent) {
				t.Fatalf("the error shows a host path: %v", err)
			}
			left, _ := os.ReadDir(parent)
			if len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(parent), "evil")); err == nil {
				t.Fatal("wrote outside the tree")
			}
		})
	}
}

// Links that stay inside, however they get there, are kept: node_modules/.bin and the like.
func TestUnpackKeepsLinksInside(t *testing.T) {
	sym := func(name, target string) entry { return entry{name: name, link: target, typ: tar.TypeSymlink} }
	dst := filepath.Join(t.TempDir(), "tree")
	_, err := Unpack(archive(t, false,
		entry{name: "lib/pkg/cli.js", body: "js"},
		sym("node_modules/.bin/cli", "../../lib/pkg/cli.js"),
		sym("x/up", ".."),                  // the tree's root, reached from below
		sym("via", "x/up/x/up/lib"),        // a chain that stays inside
		sym("dangling", "not/there/yet"),   // harmless: it names a place inside
		sym("a", "b"), sym("b", "lib/pkg"), // a → b → lib/pkg
	), false, dst, Limits{MaxBytes: 100, MaxEntries: 20, AllowSymlinks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"node_modules/.bin/cli", "via/pkg/cli.js", "a/cli.js"} {
		if b, err := os.ReadFile(filepath.Join(dst, p)); string(b) != "js" {
			t.Errorf("%s reads %q, %v", p, b, err)
		}
	}
}

func TestStaticRefusesAnyLink(t *testing.T) {
	_, err := Unpack(archive(t, false, entry{name: "l", link: "index.html", typ: tar.TypeSymlink}), false, filepath.Join(t.TempDir(), "s"), Limits{})
	if !errors.Is(err, ErrUnsafe) {
		t.Fatal(err)
	}
}
