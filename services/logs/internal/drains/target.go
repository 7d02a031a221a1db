package drains

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"tori.dev/services/logs/internal/logs"
)

// MaxURLLength bounds a drain's URL.
const MaxURLLength = 2048

// Target is a drain URL taken apart.
type Target struct {
	Kind Kind
	Host string // without brackets
	Port int
	URL  *url.URL
}

// Addr is host:port, as dialled.
func (t Target) Addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// ParseURL checks a drain's URL: https:// or syslog+tls://, a host, a port in range, at most
// MaxURLLength. Its refusals are *logs.InvalidParameterError naming "url".
func ParseURL(raw string) (Target, error) {
	bad := func(reason string) (Target, error) {
		return Target{}, &logs.InvalidParameterError{Name: "url", Reason: reason}
	}
	if raw == "" {
		return bad("is required")
	}
	if len(raw) > MaxURLLength {
		return bad("is longer than 2048 characters")
	}
	if strings.ContainsAny(raw, " \t\r\n") {
		return bad("must not contain white space")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("is not a URL")
	}
	var kind Kind
	defPort := 0
	switch strings.ToLower(u.Scheme) {
	case "https":
		kind, defPort = KindHTTPS, 443
	case "syslog+tls":
		kind = KindSyslog
	case "":
		return bad("is not an absolute URL (https:// or syslog+tls://)")
	default:
		return bad("must start with https:// or syslog+tls:// (not " + u.Scheme + "://)")
	}
	host := u.Hostname()
	if host == "" || u.Opaque != "" {
		return bad("has no host")
	}
	port := defPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("has a port out of range (1-65535)")
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return bad("has an empty port")
	}
	if port == 0 {
		return bad("needs a port (syslog+tls://host:port)")
	}
	if kind == KindSyslog && (strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil) {
		return bad("of a syslog drain is host:port alone")
	}
	if u.Fragment != "" {
		return bad("must not have a fragment")
	}
	return Target{Kind: kind, Host: host, Port: port, URL: u}, nil
}

// Masked is raw as shown to anyone: no userinfo password, no query value.
func Masked(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "***")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		parts := make([]string, 0, len(q))
		for k := range q {
			parts = append(parts, url.QueryEscape(k)+"=***")
		}
		slices.Sort(parts)
		u.RawQuery = strings.Join(parts, "&")
	}
	s := u.String()
	return strings.Replace(s, "%2A%2A%2A", "***", 1)
}
