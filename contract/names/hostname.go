package names

import "strings"

// HostnameMaxLen is the longest hostname DNS carries.
const HostnameMaxLen = 253

// ValidHostname reports whether h has the shape of a custom hostname: a lower-case DNS name
// of at least two labels, each 1 to 63 of a-z, 0-9 and '-' and neither starting nor ending
// with '-', whose last label is not all digits (no top-level domain is, so such a name is
// an IPv4 literal or nonsense). No trailing dot: callers drop it first. The apps service
// takes no other hostname, and identity mails about no other.
func ValidHostname(h string) bool {
	if len(h) == 0 || len(h) > HostnameMaxLen {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !validLabel(l) {
			return false
		}
	}
	return !allDigits(labels[len(labels)-1])
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

// ChallengePrefix is the label under which a custom hostname's verification TXT record
// lives: the record for shop.example.com is _tori-challenge.shop.example.com.
const ChallengePrefix = "_tori-challenge."

// VerificationPrefix begins a verification record's value; 32 lower-case hex digits follow.
const VerificationPrefix = "tori-verify="

// verificationHexLen is how many hex digits follow VerificationPrefix (128 random bits).
const verificationHexLen = 32

// ValidVerificationValue reports whether v is a verification record's value: VerificationPrefix
// and 32 lower-case hex digits.
func ValidVerificationValue(v string) bool {
	hex, ok := strings.CutPrefix(v, VerificationPrefix)
	if !ok || len(hex) != verificationHexLen {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
