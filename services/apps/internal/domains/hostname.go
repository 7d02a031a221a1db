package domains

import (
	"strings"

	"tori.dev/contract/names"
)

// Normalize returns the canonical form of a requested hostname, or ErrInvalidHostname. A
// single trailing dot (the fully qualified form) is dropped. The result has the contract's
// shape of a custom hostname (names.ValidHostname: a lower-case DNS name of at least two
// labels that is not an IP literal nor a wildcard) and is not the apps domain or under it
// (those hosts are the platform's own).
func Normalize(raw, appsDomain string) (string, error) {
	h := strings.TrimSuffix(raw, ".")
	if !names.ValidHostname(h) {
		return "", ErrInvalidHostname
	}
	ad := strings.TrimSuffix(strings.ToLower(appsDomain), ".")
	if h == ad || strings.HasSuffix(h, "."+ad) {
		return "", ErrInvalidHostname
	}
	return h, nil
}
