package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Previews is where previews are served (docs/previews.md, "At the edge"); the runtime and
// its edge process both read it (the edge gets it in its environment with the Edge settings).
type Previews struct {
	// PreviewsDomain: a preview is served at <slug>-<id>.<PreviewsDomain>, under one
	// wildcard certificate of its own; unset: preview.<APPS_DOMAIN>. A bare domain, not
	// APPS_DOMAIN itself.
	PreviewsDomain string `env:"PREVIEWS_DOMAIN"`
}

// maxPreviewsDomain leaves room for a 63-character label within a name's 253.
const maxPreviewsDomain = 253 - 64

var domainRe = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// PreviewsDomainFor is PREVIEWS_DOMAIN, or preview.<appsDomain> when unset.
func (p *Previews) PreviewsDomainFor(appsDomain string) string {
	if p.PreviewsDomain != "" {
		return strings.ToLower(p.PreviewsDomain)
	}
	return "preview." + strings.ToLower(strings.TrimSuffix(appsDomain, "."))
}

// validate refuses a PREVIEWS_DOMAIN that is not a bare domain (no scheme, port, path,
// wildcard or trailing dot) or that is APPS_DOMAIN itself (a preview's host would then be
// read as an app's).
func (p *Previews) validate(appsDomain string) error {
	d := p.PreviewsDomainFor(appsDomain)
	if len(d) > maxPreviewsDomain || !domainRe.MatchString(d) {
		return fmt.Errorf("PREVIEWS_DOMAIN %q must be a bare domain name (like preview.apps.example.com) of at most %d characters", p.PreviewsDomain, maxPreviewsDomain)
	}
	if d == strings.ToLower(strings.TrimSuffix(appsDomain, ".")) {
		return fmt.Errorf("PREVIEWS_DOMAIN must not be APPS_DOMAIN: give previews a domain of their own (default preview.<APPS_DOMAIN>)")
	}
	return nil
}
