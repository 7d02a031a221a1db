package artifact

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
)

// checked is one entry of an archive that passed the rules every reader of an archive applies
// (walk): a folder, a regular file within the size cap, or a link whose text stays inside.
type checked struct {
	header *tar.Header
	name   string // cleaned, slash-separated, never "" (the archive's own root is skipped)
}

// walk reads tr and hands fn each entry that passes the rules, in archive order; a regular
// file's bytes are read from tr, Header.Size of them. It is the one place the rules live,
// so unpacking to disk (Unpack) and reading a site straight from the stream (Files) refuse
// exactly the same archives: at most lim.MaxEntries entries and lim.MaxBytes of file
// contents, no absolute path, `..`, backslash or NUL in a name, links only where
// lim.AllowSymlinks says and only relative ones whose text stays inside, and no hard link,
// FIFO, device or other type. Every refusal is ErrUnsafe.
func walk(tr *tar.Reader, lim Limits, fn func(checked) error) error {
	var total int64
	entries := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnsafe, err)
		}
		entries++
		if lim.MaxEntries > 0 && entries > lim.MaxEntries {
			return fmt.Errorf("%w: more than %d entries", ErrUnsafe, lim.MaxEntries)
		}
		name, err := cleanName(h.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue // the archive's own root folder
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			total += h.Size
			if lim.MaxBytes > 0 && total > lim.MaxBytes {
				return fmt.Errorf("%w: more than %d bytes", ErrUnsafe, lim.MaxBytes)
			}
		case tar.TypeSymlink:
			if !lim.AllowSymlinks {
				return fmt.Errorf("%w: link %q: a site holds no links", ErrUnsafe, h.Name)
			}
			if err := checkLink(name, h.Linkname); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		default:
			// None belongs in a site or a source tree, and a FIFO or a device would make
			// whoever opens it (the agent reading a manifest) block or read a host device.
			return fmt.Errorf("%w: entry %q is %s", ErrUnsafe, h.Name, kind(h.Typeflag))
		}
		if err := fn(checked{header: h, name: name}); err != nil {
			return err
		}
	}
}
