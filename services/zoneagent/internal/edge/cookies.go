package edge

import (
	"net/http"
	"strings"
)

// DropSharedCookies removes from an app's answer every Set-Cookie whose Domain is appsDomain
// or a parent of it (`Domain=apps.example.com`, `Domain=example.com`): such a cookie would be
// sent to every other app, which is session fixation and login CSRF against their users.
// Host-only cookies and cookies for the app's own host stay. It returns the dropped cookies'
// names, for the app's own log. Script on a static site can still set such a cookie: only
// the apps domain on the Public Suffix List stops that (docs/tenants-edge.md).
func DropSharedCookies(h http.Header, appsDomain string) (dropped []string) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return nil
	}
	apps := normalDomain(appsDomain)
	kept := lines[:0:0]
	for _, line := range lines {
		if sharedDomain(line, apps) {
			name, _, _ := strings.Cut(line, "=")
			dropped = append(dropped, strings.TrimSpace(name))
			continue
		}
		kept = append(kept, line)
	}
	if len(dropped) == 0 {
		return nil
	}
	h.Del("Set-Cookie")
	for _, line := range kept {
		h.Add("Set-Cookie", line)
	}
	return dropped
}

// sharedDomain reports whether a Set-Cookie line names appsDomain or a parent of it in any
// of its Domain attributes (a browser takes the last; any one is refused here).
func sharedDomain(line, apps string) bool {
	_, attrs, _ := strings.Cut(line, ";")
	for attr := range strings.SplitSeq(attrs, ";") {
		k, v, _ := strings.Cut(attr, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "domain") {
			continue
		}
		d := normalDomain(strings.TrimPrefix(strings.TrimSpace(v), "."))
		if d != "" && (d == apps || strings.HasSuffix(apps, "."+d)) {
			return true
		}
	}
	return false
}

func normalDomain(d string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(d), "."))
}
