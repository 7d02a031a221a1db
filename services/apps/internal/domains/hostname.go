package domains

import (
	"strings"
)

// Normalize returns the canonical form of a requested hostname, or ErrInvalidHostname. A
// single trailing dot (the fully qualified form) is dropped. The result is a lower-case DNS
// name of at least two labels that is not an IP literal, not a wildcard and not the apps
// domain or under it (those hosts are the platform's own).
func Normalize(raw, appsDomain string) (string, error) {
	h := strings.TrimSuffix(raw, ".")
	if len(h) == 0 || len(h) > 253 {
		return "", ErrInvalidHostname
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "", ErrInvalidHostname
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", ErrInvalidHostname
		}
	}
	// A numeric last label is an IPv4 literal (or nonsense); no TLD is all digits.
	if allDigits(labels[len(labels)-1]) {
		return "", ErrInvalidHostname
	}
	ad := strings.TrimSuffix(strings.ToLower(appsDomain), ".")
	if h == ad || strings.HasSuffix(h, "."+ad) {
		return "", ErrInvalidHostname
	}
	return h, nil
}

// validLabel: 1–63 of a-z, 0-9 and '-', not starting or ending with '-'. Upper case is
// refused rather than folded, so the hostname the caller sees is the one they sent.
func validLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
