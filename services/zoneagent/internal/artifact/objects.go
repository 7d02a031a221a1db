package artifact

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var keyRe = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

// OpenObject reads an object of the local object store the deploys service writes to. The
// key is checked so that it cannot name a file outside root.
func OpenObject(root, key string) (io.ReadCloser, error) {
	if !keyRe.MatchString(key) {
		return nil, fmt.Errorf("invalid artifact key %q", key)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == ".." || seg == "." {
			return nil, fmt.Errorf("invalid artifact key %q", key)
		}
	}
	return os.Open(filepath.Join(root, filepath.FromSlash(key)))
}
