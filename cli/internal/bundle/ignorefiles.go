package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// Ignore files the bundle honours.
const (
	GitignoreFile    = ".gitignore"
	ToriignoreFile   = ".toriignore"
	DockerignoreFile = ".dockerignore"
	gitInfoExclude   = ".git/info/exclude"
)

// gitPatterns holds gitignore-syntax patterns (go-git's parser and matcher) from files found
// in the folder, each scoped to the folder its file sits in, in rising priority: a deeper file
// and a later line win, as in git.
type gitPatterns []gitignore.Pattern

// load appends the patterns of the file at dir/rel (if there is one) for the folder domain.
func (ps *gitPatterns) load(dir, rel string, domain []string) error {
	name := filepath.Join(dir, filepath.FromSlash(rel))
	if info, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		*ps = append(*ps, gitignore.ParsePattern(line, domain))
	}
	return nil
}

// result is the highest-priority pattern's verdict on path: Exclude, Include (a `!pattern`),
// or NoMatch. go-git's Matcher answers only excluded or not; the bundle needs the third
// answer to let a .toriignore bring back what a default leaves out.
func (ps gitPatterns) result(path []string, isDir bool) gitignore.MatchResult {
	for i := len(ps) - 1; i >= 0; i-- {
		if r := ps[i].Match(path, isDir); r != gitignore.NoMatch {
			return r
		}
	}
	return gitignore.NoMatch
}

// dockerignore is the folder's top-level .dockerignore, read and matched as Docker does
// (moby's patternmatcher): patterns are relative to the top, `!` re-includes.
type dockerignore struct {
	pm *patternmatcher.PatternMatcher
}

func loadDockerignore(dir string) (dockerignore, error) {
	f, err := os.Open(filepath.Join(dir, DockerignoreFile))
	if errors.Is(err, fs.ErrNotExist) {
		return dockerignore{}, nil
	}
	if err != nil {
		return dockerignore{}, fmt.Errorf("reading %s: %w", DockerignoreFile, err)
	}
	defer f.Close()
	lines, err := ignorefile.ReadAll(f)
	if err != nil {
		return dockerignore{}, fmt.Errorf("reading %s: %w", DockerignoreFile, err)
	}
	pm, err := patternmatcher.New(lines)
	if err != nil {
		return dockerignore{}, fmt.Errorf("%s: %w", DockerignoreFile, err)
	}
	return dockerignore{pm: pm}, nil
}

// excludes reports whether the .dockerignore leaves out rel (slash-separated).
func (d dockerignore) excludes(rel string) (bool, error) {
	if d.pm == nil {
		return false, nil
	}
	ok, err := d.pm.MatchesOrParentMatches(rel)
	if err != nil {
		return false, fmt.Errorf("%s: %w", DockerignoreFile, err)
	}
	return ok, nil
}

// prunes reports whether a folder the .dockerignore leaves out can be skipped whole: not when
// a `!pattern` might bring back something inside it.
func (d dockerignore) prunes() bool {
	return d.pm == nil || !d.pm.Exclusions()
}
