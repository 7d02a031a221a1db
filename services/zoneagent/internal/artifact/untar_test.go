package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
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
	for name, entries := range map[string][]entry{
		"dotdot":             {{name: "../evil", body: "x"}},
		"nested dotdot":      {{name: "a/../../evil", body: "x"}},
		"absolute":           {{name: "/etc/evil", body: "x"}},
		"escaping link":      {{name: "out", link: "../../etc", typ: tar.TypeSymlink}},
		"absolute link":      {{name: "out", link: "/etc/passwd", typ: tar.TypeSymlink}},
		"write through link": {{name: "d", link: ".", typ: tar.TypeSymlink}, {name: "e", link: "d/../..", typ: tar.TypeSymlink}},
		"hard link":          {{name: "h", link: "/etc/passwd", typ: tar.TypeLink}},
		"device":             {{name: "dev", typ: tar.TypeChar}},
		"too many entries":   {{name: "1", body: "x"}, {name: "2", body: "x"}, {name: "3", body: "x"}},
		"too large":          {{name: "big", body: "0123456789abcdef"}},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "tree")
			_, err := Unpack(archive(t, false, entries...), false, dst, Limits{MaxBytes: 10, MaxEntries: 2, AllowSymlinks: true})
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("got %v, want ErrUnsafe", err)
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

func TestStaticRefusesAnyLink(t *testing.T) {
	_, err := Unpack(archive(t, false, entry{name: "l", link: "index.html", typ: tar.TypeSymlink}), false, filepath.Join(t.TempDir(), "s"), Limits{})
	if !errors.Is(err, ErrUnsafe) {
		t.Fatal(err)
	}
}
