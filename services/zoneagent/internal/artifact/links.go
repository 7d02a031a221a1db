package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxLinkHops bounds how many links one resolution may follow, as the kernel's ELOOP does.
const maxLinkHops = 40

// checkLink refuses a link whose target is absolute or, read as text from the link's
// folder, leaves the tree. It is the early, cheap check; checkTreeLinks is the one that
// counts, since only the finished tree says where a chain really goes.
func checkLink(name, target string) error {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsAny(target, "\\\x00") {
		return fmt.Errorf("%w: link %q → %q: only relative links are allowed", ErrUnsafe, name, target)
	}
	resolved := path.Join(path.Dir(name), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("%w: link %q → %q leaves the tree", ErrUnsafe, name, target)
	}
	return nil
}

// checkTreeLinks resolves every link of the unpacked tree against the tree itself,
// following each link met on the way, and refuses one that ends outside. A chain such as
// `a → .`, `b → a/..` passes the textual check of each link alone, yet `b` names the
// tree's parent; and a link unpacked later can change where an earlier one leads, so this
// runs once the whole archive is in place.
func checkTreeLinks(root *os.Root, links []string) error {
	for _, name := range links {
		if _, err := resolve(root, name); err != nil {
			return err
		}
	}
	return nil
}

// resolve returns where name leads inside root, every link followed, or ErrUnsafe when the
// way leaves the tree or loops. Components that do not exist (yet) are taken as written:
// a dangling link that stays inside is harmless.
func resolve(root *os.Root, name string) (string, error) {
	pending := strings.Split(name, "/")
	var cur []string
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("%w: link %q leads out of the tree", ErrUnsafe, name)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		p := strings.Join(append(cur, c), "/")
		fi, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			cur = append(cur, c)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%w: link %q: %v", ErrUnsafe, name, stripRoot(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%w: link %q: too many levels of links", ErrUnsafe, name)
		}
		target, err := root.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("%w: link %q: %v", ErrUnsafe, name, stripRoot(err))
		}
		if strings.HasPrefix(target, "/") {
			return "", fmt.Errorf("%w: link %q leads through %q to an absolute path", ErrUnsafe, name, p)
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return strings.Join(cur, "/"), nil
}

// stripRoot keeps the host's paths out of a message the customer reads.
func stripRoot(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
