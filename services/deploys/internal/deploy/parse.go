package deploy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// imageRe is <registry>/<repo>@sha256:<64 lowercase hex>: a digest pins exactly one image, so
// a deploy and its rollback run the same bytes.
var imageRe = regexp.MustCompile(`^[^/@\s]+(/[^@\s]+)+@sha256:[0-9a-f]{64}$`)

// ParseImage checks an image reference under the default registry policy: any registry
// named by a public DNS name (see Registries).
func ParseImage(s string) (string, error) {
	return Registries{}.ParseImage(s)
}

// maxReleaseArgs and maxReleaseLen bound a release command; it is a command line, not a script.
const (
	maxReleaseArgs = 256
	maxReleaseLen  = 16 << 10
)

// ParseRelease reads a release command given as a JSON list of strings or a JSON string split
// on whitespace without quoting. null or absent gives nil; an empty command is nil too.
func ParseRelease(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return checkRelease(list)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return SplitRelease(s)
	}
	return nil, fmt.Errorf("%w: want a list of arguments or a string", ErrInvalidRelease)
}

// SplitRelease splits a command line on whitespace, without quoting, as the contract says.
func SplitRelease(s string) ([]string, error) {
	return checkRelease(strings.Fields(s))
}

func checkRelease(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) > maxReleaseArgs {
		return nil, fmt.Errorf("%w: more than %d arguments", ErrInvalidRelease, maxReleaseArgs)
	}
	total := 0
	for _, a := range args {
		total += len(a)
		if strings.ContainsRune(a, 0) {
			return nil, fmt.Errorf("%w: NUL in an argument", ErrInvalidRelease)
		}
	}
	if total > maxReleaseLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidRelease, maxReleaseLen)
	}
	if args[0] == "" {
		return nil, fmt.Errorf("%w: empty program", ErrInvalidRelease)
	}
	return args, nil
}

// maxPathLen bounds one site-relative path.
const maxPathLen = 1024

// CleanPath checks a static file's site-relative path. It refuses rather than repairs: a
// path with `..`, a leading `/`, a backslash or a NUL is a client bug or an attack, and
// silently rewriting it could overwrite another file of the site.
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty file name", ErrInvalidPath)
	case len(p) > maxPathLen:
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalidPath, maxPathLen)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: %q starts with /", ErrInvalidPath, p)
	case strings.ContainsAny(p, "\\\x00"):
		return "", fmt.Errorf("%w: %q holds a backslash or NUL", ErrInvalidPath, p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			return "", fmt.Errorf("%w: %q holds ..", ErrInvalidPath, p)
		case "", ".":
			return "", fmt.Errorf("%w: %q has an empty or . segment", ErrInvalidPath, p)
		}
	}
	return p, nil
}
