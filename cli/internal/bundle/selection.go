package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// File is one file of a folder, by its slash-separated path inside it.
type File struct {
	Path string
	Abs  string
	Size int64
}

// LeftOut is a path the bundle does not send, and why; a folder's path ends in "/" and stands
// for everything in it.
type LeftOut struct {
	Path   string
	Reason string
}

// Selection is what a folder's deploy sends, and what it leaves out.
type Selection struct {
	Files   []File
	LeftOut []LeftOut
}

// Select walks dir the way git would see it, for a deploy of kind:
//
//  1. never sent: .git, .hg, .svn, .DS_Store; for a static site also tori.json and every dot
//     path but a top-level .well-known (see neverSent);
//  2. .toriignore files (gitignore syntax, nested like .gitignore) have the last word on the
//     rest: a pattern leaves a path out, a `!pattern` keeps it whatever follows;
//  3. left out by default: .env* and a static site's node_modules;
//  4. left out by .gitignore files (nested, with .git/info/exclude) and by the top-level
//     .dockerignore (Docker's syntax).
//
// A folder left out is not entered, as in git. Symbolic links are followed to files inside
// dir; a link that leads outside dir, nowhere, or to a file the rules leave out is refused with
// an error naming it, so nothing outside the folder's own files is ever sent.
func Select(dir string, kind Kind) (Selection, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Selection{}, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return Selection{}, err
	}
	w := walker{root: root, kind: kind, reasons: map[string]string{}}
	if err := w.git.load(root, gitInfoExclude, nil); err != nil {
		return Selection{}, err
	}
	if err := w.enter(nil); err != nil {
		return Selection{}, err
	}
	if w.docker, err = loadDockerignore(root); err != nil {
		return Selection{}, err
	}
	if err := filepath.WalkDir(root, w.visit); err != nil {
		return Selection{}, err
	}
	if err := w.checkLinks(); err != nil {
		return Selection{}, err
	}
	sort.Slice(w.sel.Files, func(i, j int) bool { return w.sel.Files[i].Path < w.sel.Files[j].Path })
	sort.Slice(w.sel.LeftOut, func(i, j int) bool { return w.sel.LeftOut[i].Path < w.sel.LeftOut[j].Path })
	return w.sel, nil
}

type walker struct {
	root   string
	kind   Kind
	git    gitPatterns
	tori   gitPatterns
	docker dockerignore
	sel    Selection
	// reasons holds each left-out path (folders without their slash), to name the rule that
	// left out a link's target.
	reasons map[string]string
	links   []link
}

// link is a symbolic link to a file inside the folder: sent with its target's content, once
// the target is known to be sent too.
type link struct{ path, target string }

// enter loads a folder's own ignore files, which apply below it.
func (w *walker) enter(dir []string) error {
	rel := path.Join(dir...)
	if err := w.git.load(w.root, path.Join(rel, GitignoreFile), dir); err != nil {
		return err
	}
	return w.tori.load(w.root, path.Join(rel, ToriignoreFile), dir)
}

// reason says why rel (split into segs) is left out, or "" when it is sent.
func (w *walker) reason(rel string, segs []string, isDir bool) (string, error) {
	if neverSent(segs, w.kind) {
		return ReasonDefault, nil
	}
	switch w.tori.result(segs, isDir) {
	case gitignore.Exclude:
		return ReasonToriignore, nil
	case gitignore.Include:
		return "", nil
	}
	if leftOutByDefault(segs, w.kind) {
		return ReasonDefault, nil
	}
	if w.git.result(segs, isDir) == gitignore.Exclude {
		return ReasonGitignore, nil
	}
	if out, err := w.docker.excludes(rel); err != nil || out {
		return ReasonDockerignore, err
	}
	return "", nil
}

func (w *walker) leaveOut(rel, reason string, isDir bool) {
	w.reasons[rel] = reason
	if isDir {
		rel += "/"
	}
	w.sel.LeftOut = append(w.sel.LeftOut, LeftOut{Path: rel, Reason: reason})
}

func (w *walker) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if p == w.root {
		return nil
	}
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	segs := strings.Split(rel, "/")
	isDir := d.IsDir()
	why, err := w.reason(rel, segs, isDir)
	if err != nil {
		return err
	}
	if isDir {
		if why == ReasonDockerignore && !w.docker.prunes() {
			// A `!pattern` may bring back something inside: each file is judged on its own.
			return w.enter(segs)
		}
		if why != "" {
			w.leaveOut(rel, why, true)
			return filepath.SkipDir
		}
		return w.enter(segs)
	}
	if why != "" {
		w.leaveOut(rel, why, false)
		return nil
	}
	if d.Type()&fs.ModeSymlink != 0 {
		return w.symlink(p, rel)
	}
	if !d.Type().IsRegular() {
		return nil // sockets, FIFOs, devices: nothing a site or a build is made of
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	w.sel.Files = append(w.sel.Files, File{Path: rel, Abs: p, Size: info.Size()})
	return nil
}

// symlink admits a link to a file inside the folder and refuses any other.
func (w *walker) symlink(p, rel string) error {
	dest, _ := os.Readlink(p)
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("%s is a symbolic link to %s, which does not exist: fix or remove the link, or leave it out in %s", rel, dest, ToriignoreFile)
	}
	inside, err := filepath.Rel(w.root, target)
	if err != nil || !filepath.IsLocal(inside) {
		return fmt.Errorf("%s is a symbolic link to %s, outside the folder: tori sends only the folder's own files (copy the file in, or leave the link out in %s)", rel, dest, ToriignoreFile)
	}
	info, err := os.Stat(target)
	if err != nil {
		return err
	}
	if info.IsDir() {
		w.leaveOut(rel, ReasonFolderLink, false)
		return nil
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	w.links = append(w.links, link{path: rel, target: filepath.ToSlash(inside)})
	w.sel.Files = append(w.sel.Files, File{Path: rel, Abs: p, Size: info.Size()})
	return nil
}

// checkLinks refuses a link whose target is left out: sending it under the link's name would
// publish what the rules keep back (a `config.txt` pointing at `.env`).
func (w *walker) checkLinks() error {
	for _, l := range w.links {
		segs := strings.Split(l.target, "/")
		for i := len(segs); i > 0; i-- {
			if why, ok := w.reasons[path.Join(segs[:i]...)]; ok {
				return fmt.Errorf("%s is a symbolic link to %s, which is left out (%s): tori does not send it under another name (leave the link out in %s, or keep its target)", l.path, l.target, why, ToriignoreFile)
			}
		}
	}
	return nil
}
