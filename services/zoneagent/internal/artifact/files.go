package artifact

import (
	"archive/tar"
	"fmt"
	"io"
	"path"
)

// Files reads a site's archive (a plain tar) from r as it arrives, without writing it
// anywhere, and hands fn each regular file: its cleaned, slash-separated name, its size and
// its bytes (what fn leaves unread is skipped). The rules are Unpack's, from the same walk,
// with no links at all; and a name that the archive makes both a file and a folder is
// refused, as Unpack's disk refuses it. A refusal is ErrUnsafe and can come after fn has
// seen earlier files: whoever consumes them keeps nothing of the site on an error.
func Files(r io.Reader, lim Limits, fn func(name string, size int64, body io.Reader) error) error {
	lim.AllowSymlinks = false
	tr := tar.NewReader(r)
	seen := shape{}
	return walk(tr, lim, func(e checked) error {
		switch e.header.Typeflag {
		case tar.TypeDir:
			return seen.folder(e.name, e.header.Name)
		case tar.TypeReg:
			if err := seen.file(e.name, e.header.Name); err != nil {
				return err
			}
			return fn(e.name, e.header.Size, tr)
		}
		return nil // walk hands on nothing else without links
	})
}

// shape is what an archive has made each name so far: a folder (true) or a file (false).
type shape map[string]bool

// folder records name and every folder above it, refusing one the archive made a file.
func (s shape) folder(name, raw string) error {
	for p := name; p != "."; p = path.Dir(p) {
		isDir, ok := s[p]
		if ok && !isDir {
			return fmt.Errorf("%w: %q: %q is a file, not a folder", ErrUnsafe, raw, p)
		}
		if ok {
			return nil // recorded with its parents before
		}
		s[p] = true
	}
	return nil
}

// file records name as a file (again, for a later copy that replaces it), refusing one the
// archive made a folder.
func (s shape) file(name, raw string) error {
	if s[name] {
		return fmt.Errorf("%w: file %q: a folder has that name", ErrUnsafe, raw)
	}
	if dir := path.Dir(name); dir != "." {
		if err := s.folder(dir, raw); err != nil {
			return err
		}
	}
	s[name] = false
	return nil
}
