package upload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"testing"

	"tori.dev/services/deploys/internal/deploy"
)

const boundary = "upload-test-boundary"

type entry struct{ name, body string }

func staticBody(files ...entry) []byte {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=%q\r\n\r\n%s\r\n", boundary, f.name, f.body)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

func tarball(t *testing.T, files ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func sourceBody(tgz []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"source\"; filename=\"app.tar.gz\"\r\n\r\n", boundary)
	b.Write(tgz)
	fmt.Fprintf(&b, "\r\n--%s--\r\n", boundary)
	return b.Bytes()
}

// incompressible is text gzip cannot shrink, so a tarball holding it is large on the wire.
func incompressible(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)
}

const viteJSON = `{"devDependencies": {"vite": "^5"}}`

// A static site's package.json is found only at its root, read whole, and kept in the site
// like any other file; the last of two is the one the zone unpacks, so it is the one read.
func TestStaticReadsTheRootPackageJSON(t *testing.T) {
	big := strings.Repeat("x", deploy.MaxPackageJSONBytes+1)
	for _, tc := range []struct {
		name  string
		files []entry
		want  PackageJSON
	}{
		{"at the root", []entry{{"index.html", "hi"}, {"package.json", viteJSON}}, PackageJSON{Found: true, Data: []byte(viteJSON)}},
		{"only in a folder", []entry{{"index.html", "hi"}, {"app/package.json", viteJSON}}, PackageJSON{}},
		{"none", []entry{{"index.html", "hi"}}, PackageJSON{}},
		{"the last of two", []entry{{"package.json", `{}`}, {"index.html", "hi"}, {"package.json", viteJSON}}, PackageJSON{Found: true, Data: []byte(viteJSON)}},
		{"over the bound", []entry{{"package.json", big}}, PackageJSON{Found: true, Problem: fmt.Sprintf("larger than %d bytes", deploy.MaxPackageJSONBytes)}},
		{"exactly at the bound", []entry{{"package.json", big[1:]}}, PackageJSON{Found: true, Data: []byte(big[1:])}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			files, pkg, err := Static(bytes.NewReader(staticBody(tc.files...)), boundary, &out)
			if err != nil || files != len(tc.files) {
				t.Fatalf("files %d err %v", files, err)
			}
			if pkg.Found != tc.want.Found || !bytes.Equal(pkg.Data, tc.want.Data) || pkg.Problem != tc.want.Problem {
				t.Fatalf("got found=%v problem=%q %d bytes, want found=%v problem=%q %d bytes",
					pkg.Found, pkg.Problem, len(pkg.Data), tc.want.Found, tc.want.Problem, len(tc.want.Data))
			}
			// The file is served like any other: the artifact holds every part whole.
			tr := tar.NewReader(&out)
			n := 0
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(tr)
				if string(body) != tc.files[n].body {
					t.Fatalf("entry %s holds %d bytes, want %d", h.Name, len(body), len(tc.files[n].body))
				}
				n++
			}
			if n != len(tc.files) {
				t.Fatalf("%d entries, want %d", n, len(tc.files))
			}
		})
	}
}

// A source tarball is scanned as it streams: its root package.json (./package.json being
// the same file) is found wherever it sits, the tarball is stored byte for byte, and a
// tarball the scan cannot read is still stored whole (the zone judges it).
func TestSourceReadsTheRootPackageJSON(t *testing.T) {
	bulk := incompressible(t, 3<<20) // past every pipe and decompressor buffer
	unreadable := PackageJSON{Problem: "the source tarball could not be read to its end"}
	for _, tc := range []struct {
		name string
		tgz  []byte
		want PackageJSON
	}{
		{"at the root", tarball(t, entry{"server.js", "x"}, entry{"package.json", viteJSON}), PackageJSON{Found: true, Data: []byte(viteJSON)}},
		{"as ./package.json after megabytes", tarball(t, entry{"bulk.txt", bulk}, entry{"./package.json", viteJSON}), PackageJSON{Found: true, Data: []byte(viteJSON)}},
		{"only in a folder", tarball(t, entry{"web/package.json", viteJSON}), PackageJSON{}},
		{"none", tarball(t, entry{"tori.json", `{"start": "x"}`}), PackageJSON{}},
		{"the last of two", tarball(t, entry{"package.json", `{}`}, entry{"package.json", viteJSON}), PackageJSON{Found: true, Data: []byte(viteJSON)}},
		{"over the bound", tarball(t, entry{"package.json", strings.Repeat("x", deploy.MaxPackageJSONBytes+1)}),
			PackageJSON{Found: true, Problem: fmt.Sprintf("larger than %d bytes", deploy.MaxPackageJSONBytes)}},
		{"not gzip", []byte(bulk), PackageJSON{Problem: "the source is not a gzip-compressed tarball"}},
		{"cut short", tarball(t, entry{"bulk.txt", bulk}, entry{"package.json", viteJSON})[:1<<20], unreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			parts, err := Source(bytes.NewReader(sourceBody(tc.tgz)), boundary, &out)
			pkg := parts.Package
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), tc.tgz) {
				t.Fatalf("stored %d bytes, sent %d", out.Len(), len(tc.tgz))
			}
			if pkg.Found != tc.want.Found || !bytes.Equal(pkg.Data, tc.want.Data) || pkg.Problem != tc.want.Problem {
				t.Fatalf("got found=%v problem=%q %d bytes, want found=%v problem=%q %d bytes",
					pkg.Found, pkg.Problem, len(pkg.Data), tc.want.Found, tc.want.Problem, len(tc.want.Data))
			}
		})
	}
}

// A tarball that unpacks past the zone's caps on a source tree (bytes, entries) is scanned
// only that far and then ignored: the zone refuses it, and a gzip bomb costs no more.
func TestSourceScanStopsAtTheCaps(t *testing.T) {
	tgz := tarball(t, entry{"a.txt", strings.Repeat("0", 64<<10)}, entry{"b.txt", "b"}, entry{"package.json", viteJSON})
	scan := func(maxEntries int, maxBytes int64) PackageJSON {
		return scanSource(bytes.NewReader(tgz), maxEntries, maxBytes)
	}
	if got := scan(3, 1<<20); !got.Found || string(got.Data) != viteJSON {
		t.Fatalf("within the caps: %+v", got)
	}
	for name, got := range map[string]PackageJSON{"bytes": scan(3, 32<<10), "entries": scan(2, 1<<20)} {
		if got.Found || got.Problem == "" {
			t.Errorf("past the %s cap: %+v", name, got)
		}
	}
}
