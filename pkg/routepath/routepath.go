// Package routepath decides whether a request path names a route, the way the services' Fiber
// routers decide it: on the raw path (as received, before any unescaping), static segments
// compared case-insensitively, one trailing slash ignored. Everything that decides by path
// which route a request is (the gateway's table, the console server's list of routes it never
// forwards) matches with it, so no two of them can disagree about one request.
//
// Paths with an empty, "." or ".." segment match no template, so that no normalisation
// further along (a proxy's, a router's) can turn one route into another.
package routepath

import "strings"

// Template is a route template split on '/', "" standing for a parameter.
type Template []string

// Parse splits an OpenAPI-style template such as "/api/apps/{slug}".
func Parse(template string) Template {
	t := Trim(template)
	if t == "" {
		return Template{} // the root: no segment at all
	}
	segs := strings.Split(t, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = ""
		}
	}
	return segs
}

// Trim drops the leading slash and one trailing slash: what Matches compares.
func Trim(path string) string {
	path = strings.TrimPrefix(path, "/")
	return strings.TrimSuffix(path, "/")
}

// Clean reports whether a trimmed path has no empty, "." or ".." segment.
func Clean(p string) bool {
	if p == "" {
		return true
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Is reports whether one path segment is the static segment word.
func Is(seg, word string) bool { return strings.EqualFold(seg, word) }

// Matches reports whether a raw path names t's route.
func (t Template) Matches(path string) bool {
	p := Trim(path)
	return Clean(p) && t.MatchesTrimmed(p)
}

// MatchesTrimmed is Matches for a path already trimmed and found clean, for callers that try
// one path against many templates. It does not allocate: it runs on every request.
func (t Template) MatchesTrimmed(p string) bool {
	for _, want := range t {
		if p == "" {
			return false
		}
		seg, rest, _ := strings.Cut(p, "/")
		if want != "" && !Is(seg, want) {
			return false
		}
		p = rest
	}
	return p == ""
}
