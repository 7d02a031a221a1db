package bundle

import "strings"

// Kind is what a folder is deployed as; it decides the default rules.
type Kind int

const (
	// StaticSite is a static app's files, served as they are by the edge.
	StaticSite Kind = iota
	// ServiceSource is a service app's source tree, built and run in its sandbox.
	ServiceSource
)

// Why a path is left out.
const (
	ReasonDefault      = "default"
	ReasonGitignore    = ".gitignore"
	ReasonDockerignore = ".dockerignore"
	ReasonToriignore   = ".toriignore"
	ReasonFolderLink   = "link to a folder"
)

// wellKnown is the one dot folder a static site publishes (RFC 8615), as the edge serves it.
const wellKnown = ".well-known"

// neverSent reports the paths no rule brings back: version control, Finder droppings and,
// for a static site, its tori.json and every dot path but a top-level .well-known (the edge
// answers those 404 whatever the revision holds, so sending them only exposes them to the
// upload). path is the slash-separated path in the folder, split.
func neverSent(path []string, kind Kind) bool {
	name := path[len(path)-1]
	switch name {
	case ".git", ".hg", ".svn", ".DS_Store":
		return true
	}
	if kind != StaticSite {
		return false
	}
	if len(path) == 1 && name == Manifest {
		return true
	}
	for i, seg := range path {
		if strings.HasPrefix(seg, ".") && !(i == 0 && seg == wellKnown) {
			return true
		}
	}
	return false
}

// leftOutByDefault reports the paths left out unless a .toriignore `!pattern` brings them
// back: `.env` and its kin (`.env.local`, `.env.production`: secrets belong in `tori env`),
// and a static site's node_modules (its sources, rarely its pages; a site that serves files
// from it says `!node_modules/` in .toriignore).
func leftOutByDefault(path []string, kind Kind) bool {
	name := path[len(path)-1]
	if strings.HasPrefix(name, ".env") {
		return true
	}
	return kind == StaticSite && name == "node_modules"
}
