// Package artifact unpacks deploy artifacts into a directory safely, and reads files back
// from customer trees: only regular files and folders (and, for source tarballs, links that
// stay inside the tree once every link is followed), no absolute paths, no `..`, no hard
// links, FIFOs or devices, and caps on total size and entry count, so a hostile tarball
// cannot make the agent write or read outside its tree, block, or fill the disk.
package artifact

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrUnsafe means the archive tried to leave its tree or break a cap; nothing of it is kept.
var ErrUnsafe = errors.New("unsafe artifact")

// Limits cap what one archive may unpack to.
type Limits struct {
	MaxBytes   int64 // total size of file contents
	MaxEntries int
	// AllowSymlinks admits links whose target stays inside the tree (source trees often
	// hold node_modules/.bin links); static sites never need them.
	AllowSymlinks bool
}

// DefaultLimits fit the largest plan's upload after decompression with room to spare.
var DefaultLimits = Limits{MaxBytes: 4 << 30, MaxEntries: 100_000}

// Unpack extracts the tar (gzip-compressed when gz) from r into dst, which must not exist. It
// writes into a sibling temporary folder and renames it into place, so dst is complete or
// absent; on any error the temporary folder is removed.
func Unpack(r io.Reader, gz bool, dst string, lim Limits) (files int, err error) {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return 0, fmt.Errorf("%w: not gzip: %v", ErrUnsafe, err)
		}
		defer zr.Close()
		r = zr
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".unpack-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	files, links, err := extract(tar.NewReader(r), root, lim)
	if err != nil {
		return files, err
	}
	if err := checkTreeLinks(root, links); err != nil {
		return files, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return files, err
	}
	return files, os.Rename(tmp, dst)
}

// extract writes the archive's entries under root and returns the links it made, for
// checkTreeLinks.
func extract(tr *tar.Reader, root *os.Root, lim Limits) (files int, links []string, err error) {
	err = walk(tr, lim, func(e checked) error {
		h, name := e.header, e.name
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("%w: folder %q: %v", ErrUnsafe, h.Name, stripRoot(err))
			}
		case tar.TypeReg:
			if err := writeFile(root, name, h, tr); err != nil {
				return err
			}
			files++
		case tar.TypeSymlink:
			if dir := path.Dir(name); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil {
					return fmt.Errorf("%w: link %q: %v", ErrUnsafe, h.Name, stripRoot(err))
				}
			}
			if err := root.Symlink(h.Linkname, name); err != nil {
				return fmt.Errorf("%w: link %q: %v", ErrUnsafe, h.Name, stripRoot(err))
			}
			links = append(links, name)
		}
		return nil
	})
	if err != nil {
		return files, nil, err
	}
	return files, links, nil
}

// kind names a refused tar entry type for the customer.
func kind(t byte) string {
	switch t {
	case tar.TypeLink:
		return "a hard link; only regular files, folders and relative links are allowed"
	case tar.TypeFifo:
		return "a FIFO"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	default:
		return fmt.Sprintf("of unsupported type %q", t)
	}
}

// cleanName refuses absolute paths and `..` instead of repairing them.
func cleanName(n string) (string, error) {
	if strings.ContainsAny(n, "\\\x00") || strings.HasPrefix(n, "/") {
		return "", fmt.Errorf("%w: path %q", ErrUnsafe, n)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: path %q", ErrUnsafe, n)
		}
	}
	c := path.Clean(n)
	if c == "." {
		return "", nil
	}
	return c, nil
}

func writeFile(root *os.Root, name string, h *tar.Header, r io.Reader) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%w: file %q: %v", ErrUnsafe, h.Name, stripRoot(err))
		}
	}
	mode := os.FileMode(0o644)
	if h.Mode&0o111 != 0 {
		mode = 0o755 // keep executables (build scripts) runnable; drop setuid and friends
	}
	// os.Root refuses to follow a link out of the tree, so an earlier link cannot redirect
	// this write.
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("%w: file %q: %v", ErrUnsafe, h.Name, stripRoot(err))
	}
	_, err = io.CopyN(f, r, h.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
