package certs

import (
	"context"
	"strings"
)

// Previews never order a certificate each (docs/previews.md, "At the edge"): the edge
// serves one `*.<PREVIEWS_DOMAIN>` certificate. The local CA signs it directly; an ACME CA
// needs DNS-01 for a wildcard, so it is ordered only beside the apps' wildcard
// (ZONE_TLS_WILDCARD=dns01); otherwise a preview host is ordered on demand as served hosts
// are (Serves says yes for a live preview's host).

// previewWildcard is the previews' wildcard this manager serves, or "".
func previewWildcard(o Options) string {
	w := strings.ToLower(o.PreviewWildcard)
	if !strings.HasPrefix(w, "*.") {
		return ""
	}
	if o.Local != nil || (o.ACME != nil && o.Wildcard != "") {
		return w
	}
	return ""
}

// wildcards are the certificates the DNS-01 config orders: the apps' and the previews'.
func (m *Manager) wildcards() []string {
	if m.previewWild == "" {
		return []string{m.wildcard}
	}
	return []string{m.wildcard, m.previewWild}
}

// keepLocalWildcards has the local CA's wildcards (the previews', and the apps' when asked
// for) obtained now and renewed by the cache, as the apps' own hostnames are kept.
func (m *Manager) keepLocalWildcards() error {
	var names []string
	for _, w := range []string{m.wildcard, m.previewWild} {
		if w != "" {
			names = append(names, w)
		}
	}
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.stopWild = cancel
	if err := m.managed.ManageAsync(ctx, names); err != nil {
		cancel()
		return err
	}
	return nil
}
