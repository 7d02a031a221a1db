package artifact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadFile reads name from the customer tree dir for the agent: through os.Root, so no
// path leaves the tree; the file itself must be a regular file, not a link (even one that
// stays inside), a FIFO, a socket or a device; and at most max bytes are read. A customer
// can rewrite its tree while its processes run, so whatever the agent reads from it later
// (on a wake) is read this way too. A missing file is an fs.ErrNotExist; a refused one,
// ErrUnsafe.
func ReadFile(dir, name string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsafe, name, stripRoot(err))
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrUnsafe, name, max)
	}
	// O_NOFOLLOW and O_NONBLOCK: should the file be swapped for a link or a FIFO after the
	// Lstat, the open fails or returns at once instead of following it or blocking.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsafe, name, stripRoot(err))
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(name, opened); err != nil {
		return nil, err
	}
	if !os.SameFile(fi, opened) {
		return nil, fmt.Errorf("%w: %s changed while it was read", ErrUnsafe, name)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrUnsafe, name, max)
	}
	return b, nil
}

// regular refuses anything but a regular file, naming what it found.
func regular(name string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m&fs.ModeSymlink != 0:
		what = "a link"
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("%w: %s is %s; only a regular file is read", ErrUnsafe, name, what)
}
