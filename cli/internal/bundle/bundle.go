// Package bundle turns a folder into a deploy's upload: a static site's files, one part each,
// or a service's source as one .tar.gz.
package bundle

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tori.dev/cli/internal/api"
)

// Manifest is the folder's tori.json.
const Manifest = "tori.json"

// File is one file of a folder, by its slash-separated path inside it.
type File struct {
	Path string
	Abs  string
	Size int64
}

// skipped are never part of a deploy: version control and editor droppings.
func skipped(name string, dir bool) bool {
	if dir {
		return name == ".git" || name == ".hg" || name == ".svn"
	}
	return name == ".DS_Store"
}

// Walk lists dir's regular files (symbolic links followed to files), sorted by path.
func Walk(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if skipped(d.Name(), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: filepath.ToSlash(rel), Abs: p, Size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

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

// Static is a static site's upload: every file of dir but its tori.json, a part named files
// whose filename is the path in the site.
func Static(dir string) (*api.Upload, []File, error) {
	all, err := Walk(dir)
	if err != nil {
		return nil, nil, err
	}
	var files []File
	var parts []part
	for _, f := range all {
		if f.Path == Manifest {
			continue
		}
		files = append(files, f)
		parts = append(parts, part{
			header: fmt.Sprintf("Content-Disposition: form-data; name=\"files\"; filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n", quote.Replace(f.Path)),
			file:   f.Abs, size: f.Size,
		})
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s has no files to deploy", dir)
	}
	return formUpload(parts), files, nil
}

// Source packs dir as a .tar.gz in a temporary file (removed by cleanup) and returns the
// service's upload, with release as its release part when set.
func Source(dir, release string) (up *api.Upload, size int64, cleanup func(), err error) {
	if _, err := os.Stat(filepath.Join(dir, Manifest)); err != nil {
		return nil, 0, nil, fmt.Errorf("%s has no %s: a service's source needs one (start, and optionally build and release)", dir, Manifest)
	}
	files, err := Walk(dir)
	if err != nil {
		return nil, 0, nil, err
	}
	tmp, err := os.CreateTemp("", "tori-source-*.tar.gz")
	if err != nil {
		return nil, 0, nil, err
	}
	cleanup = func() { os.Remove(tmp.Name()) }
	if err := Tar(tmp, dir, files); err != nil {
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
	if release != "" {
		parts = append(parts, part{header: "Content-Disposition: form-data; name=\"release\"\r\n", value: release, size: int64(len(release))})
	}
	return formUpload(parts), info.Size(), cleanup, nil
}

// Tar writes files (from Walk of dir) as a gzipped tarball, keeping executable bits.
func Tar(w io.Writer, dir string, files []File) error {
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
