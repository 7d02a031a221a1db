package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Posture is what the zone tells its operator at start and on /readyz about the two settings
// tenants share: "ok", or a plain sentence of what is wrong and what to do.
type Posture struct {
	// AppsDomain: whether APPS_DOMAIN is a public suffix, so browsers keep each app's cookies
	// to it.
	AppsDomain string
	// Certificates: whether a public CA is asked for every app hostname on its own (the
	// registered domain's weekly limit) instead of one wildcard.
	Certificates string
	// Edge: whether the edge process runs as its own unprivileged user (the agent sets it
	// once the edge started; an agent that is not root runs it as itself).
	Edge string
}

// Posture reads the settings (no network).
func (c *Config) Posture() Posture {
	p := Posture{AppsDomain: "ok", Certificates: "ok", Edge: "ok"}
	if !IsPublicSuffix(c.AppsDomain) {
		p.AppsDomain = fmt.Sprintf("%s is not a public suffix: one app can set cookies every other app receives; put it on the Public Suffix List (docs/tenants-edge.md)", c.AppsDomain)
	}
	if c.TLSEnabled() && c.Wildcard == "" && publicCA(c.ACMECA) {
		host, _ := url.Parse(c.ACMECA)
		p.Certificates = fmt.Sprintf("each app hostname is its own certificate from the public CA at %s, without ZONE_TLS_WILDCARD=dns01: every new app spends the weekly certificate limit of %s's registered domain for all customers; set up the wildcard (docs/tenants-edge.md)", host.Hostname(), c.AppsDomain)
	}
	return p
}

// Warnings are the posture's sentences that are not "ok", for the start line.
func (p Posture) Warnings() []string {
	var w []string
	for _, s := range []string{p.AppsDomain, p.Certificates, p.Edge} {
		if s != "ok" && s != "" {
			w = append(w, s)
		}
	}
	return w
}

// IsPublicSuffix reports whether domain is on the Public Suffix List compiled into
// golang.org/x/net/publicsuffix, ICANN or private section (browsers honour both: herokuapp.com
// and onrender.com are private entries). A single label not on the list matches only the
// list's implicit "*" rule, which is no entry: that is not counted.
func IsPublicSuffix(domain string) bool {
	d := strings.ToLower(strings.TrimSuffix(domain, "."))
	suffix, icann := publicsuffix.PublicSuffix(d)
	return suffix == d && (icann || strings.Contains(d, "."))
}

// publicCA reports whether an ACME directory URL is a public CA's: anything but a loopback,
// private or link-local address or a name reserved for local use (Pebble in tests, a CA of
// the operator's own network).
func publicCA(directory string) bool {
	u, err := url.Parse(directory)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
	}
	if host == "localhost" {
		return false
	}
	for _, local := range []string{".localhost", ".test", ".internal", ".local", ".invalid", ".example", ".home.arpa", ".lan"} {
		if strings.HasSuffix(host, local) {
			return false
		}
	}
	return true
}

// consoleUnderAppsDomain reports whether the console's URL is APPS_DOMAIN or a name under it:
// then any app could set the console's cookies.
func consoleUnderAppsDomain(consoleURL, appsDomain string) bool {
	u, err := url.Parse(consoleURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	d := strings.ToLower(strings.TrimSuffix(appsDomain, "."))
	return host == d || strings.HasSuffix(host, "."+d)
}
