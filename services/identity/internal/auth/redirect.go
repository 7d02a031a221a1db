package auth

import (
	"net/url"
	"strconv"
	"strings"
)

// maxRedirectURILen keeps an absurd URI out of the table.
const maxRedirectURILen = 2048

// loopbackHosts are the only hosts the loopback flow redirects to (RFC 8252 §7.3): the code
// must reach a listener on the customer's own machine and nowhere else.
var loopbackHosts = map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true}

// ParseRedirectURI accepts http://127.0.0.1:<port>/…, http://[::1]:<port>/… and
// http://localhost:<port>/… and nothing else: no other scheme or host, no user
// information (which could hide another host), no fragment, and an explicit port.
func ParseRedirectURI(s string) (*url.URL, error) {
	if s == "" || len(s) > maxRedirectURILen {
		return nil, ErrInvalidRedirectURI
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Opaque != "" || u.User != nil ||
		u.Fragment != "" || strings.Contains(s, "#") {
		return nil, ErrInvalidRedirectURI
	}
	if !loopbackHosts[u.Hostname()] {
		return nil, ErrInvalidRedirectURI
	}
	// "::1" is only valid bracketed; Hostname strips the brackets, so check the raw host.
	if u.Hostname() == "::1" && !strings.HasPrefix(u.Host, "[::1]:") {
		return nil, ErrInvalidRedirectURI
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != u.Port() {
		return nil, ErrInvalidRedirectURI
	}
	if !strings.HasPrefix(u.EscapedPath(), "/") {
		return nil, ErrInvalidRedirectURI
	}
	return u, nil
}
