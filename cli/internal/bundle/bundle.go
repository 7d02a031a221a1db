// Package bundle turns a folder into a deploy's upload: a static site's files, one part each,
// or a service's source as one .tar.gz. Select decides which files (selection.go).
package bundle

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"tori.dev/cli/internal/api"
)

// Manifest is the folder's tori.json.
const Manifest = "tori.json"

func boundary() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "tori-" + hex.EncodeToString(b)
}

// quote escapes a filename as Go's multipart writer does; the server reads the raw header,
// so folders in the name survive.
var quote = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

type part struct {
	header string
	file   string // read from disk, or
	value  string // sent as it is
	size   int64
}

func formUpload(parts []part) *api.Upload {
	b := boundary()
	var length int64
	for i := range parts {
		parts[i].header = "--" + b + "\r\n" + parts[i].header + "\r\n"
		length += int64(len(parts[i].header)) + parts[i].size + 2
	}
	closing := "--" + b + "--\r\n"
	length += int64(len(closing))
	return &api.Upload{
		ContentType: "multipart/form-data; boundary=" + b,
		Length:      length,
		Open: func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() {
				pw.CloseWithError(writeParts(pw, parts, closing))
			}()
			return pr, nil
		},
	}
}

func writeParts(w io.Writer, parts []part, closing string) error {
	for _, p := range parts {
		if _, err := io.WriteString(w, p.header); err != nil {
			return err
		}
		if p.file != "" {
			f, err := os.Open(p.file)
			if err != nil {
				return err
			}
			n, err := io.Copy(w, f)
			f.Close()
			if err != nil {
				return err
			}
			if n != p.size {
				return fmt.Errorf("%s changed size during the upload", p.file)
			}
		} else if _, err := io.WriteString(w, p.value); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\r\n"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, closing)
	return err
}

// Field is one plain form part sent after the files: a preview's name, ttlSeconds, env and
// database.
type Field struct{ Name, Value string }

func fieldParts(fields []Field) []part {
	var parts []part
	for _, f := range fields {
		parts = append(parts, part{header: fmt.Sprintf("Content-Disposition: form-data; name=\"%s\"\r\n", quote.Replace(f.Name)),
			value: f.Value, size: int64(len(f.Value))})
	}
	return parts
}

// Static is a static site's upload of sel's files (Select with StaticSite): a part named
// files each, whose filename is the path in the site; then fields, one part each.
func Static(dir string, sel Selection, fields ...Field) (*api.Upload, error) {
	if len(sel.Files) == 0 {
		return nil, fmt.Errorf("%s has no files to deploy", dir)
	}
	parts := make([]part, 0, len(sel.Files))
	for _, f := range sel.Files {
		parts = append(parts, part{
			header: fmt.Sprintf("Content-Disposition: form-data; name=\"files\"; filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n", quote.Replace(f.Path)),
			file:   f.Abs, size: f.Size,
		})
	}
	return formUpload(append(parts, fieldParts(fields)...)), nil
}

// CheckSource refuses a service's selection whose tori.json the ignore rules leave out: it
// would be deployed without the commands it names. A folder without one is sent as it is:
// the zone detects how to build and start it (package.json, requirements.txt, go.mod, a
// Procfile) and the deploy's log says what it found.
func CheckSource(dir string, sel Selection) error {
	for _, l := range sel.LeftOut {
		if l.Path == Manifest {
			return fmt.Errorf("%s's %s is left out (%s): the deploy would ignore its commands", dir, Manifest, l.Reason)
		}
	}
	return nil
}

// SourceOptions are a service deploy's parts besides its source.
type SourceOptions struct {
	Release    string  // the release part, when set: wins over tori.json's
	ClearCache bool    // a clearCache part: build from an empty cache
	Fields     []Field // more parts after these (a preview's)
}

// Source packs sel's files (Select with ServiceSource) as a .tar.gz in a temporary file
// (removed by cleanup) and returns the service's upload, with opts' parts after the source.
func Source(dir string, sel Selection, opts SourceOptions) (up *api.Upload, size int64, cleanup func(), err error) {
	if err := CheckSource(dir, sel); err != nil {
		return nil, 0, nil, err
	}
	tmp, err := os.CreateTemp("", "tori-source-*.tar.gz")
	if err != nil {
		return nil, 0, nil, err
	}
	cleanup = func() { os.Remove(tmp.Name()) }
	if err := Tar(tmp, sel.Files); err != nil {
		tmp.Close()
		cleanup()
		return nil, 0, nil, err
	}
	info, err := tmp.Stat()
	tmp.Close()
	if err != nil {
		cleanup()
		return nil, 0, nil, err
	}
	parts := []part{{
		header: "Content-Disposition: form-data; name=\"source\"; filename=\"source.tar.gz\"\r\nContent-Type: application/gzip\r\n",
		file:   tmp.Name(), size: info.Size(),
	}}
	if opts.Release != "" {
		parts = append(parts, part{header: "Content-Disposition: form-data; name=\"release\"\r\n", value: opts.Release, size: int64(len(opts.Release))})
	}
	if opts.ClearCache {
		parts = append(parts, part{header: "Content-Disposition: form-data; name=\"clearCache\"\r\n", value: "true", size: 4})
	}
	return formUpload(append(parts, fieldParts(opts.Fields)...)), info.Size(), cleanup, nil
}

// Tar writes files (from Select) as a gzipped tarball, keeping executable bits.
func Tar(w io.Writer, files []File) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		info, err := os.Stat(f.Abs)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Path, Mode: mode, Size: f.Size, ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		in, err := os.Open(f.Abs)
		if err != nil {
			return err
		}
		_, err = io.CopyN(tw, in, f.Size)
		in.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
