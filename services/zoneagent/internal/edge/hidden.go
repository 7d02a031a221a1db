package edge

import "strings"

// wellKnown is the one dot folder a site publishes (RFC 8615: security.txt, ACME challenges,
// app links).
const wellKnown = ".well-known"

// hidden reports whether a static site's cleaned, slash-separated path (no leading slash) names
// a dotfile or anything inside a dot folder: `.env`, `.git/config`, `a/.htpasswd`. Such paths
// are never served, whatever the revision holds (the raw API stores what it is sent), except
// under a top-level `.well-known/`, where a dot name deeper down is hidden again. The path
// must already be cleaned: `..` and `.` segments are gone, so none can hide a dot segment.
func hidden(name string) bool {
	for i, seg := range strings.Split(name, "/") {
		if i == 0 && seg == wellKnown {
			continue
		}
		if strings.HasPrefix(seg, ".") && seg != "." {
			return true
		}
	}
	return false
}
