package account

import (
	"net/mail"
	"strings"
)

// maxEmailLen is RFC 5321's limit on a forward path, less the angle brackets.
const maxEmailLen = 254

// ParseEmail checks that s is a bare, deliverable-looking address and returns it normalised
// (trimmed, lower-case), so one address always finds the same account. Display names,
// comments and dotless domains are refused: the address goes into a mail header and an
// SMTP envelope, and must be exactly what the customer typed.
func ParseEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxEmailLen || strings.ContainsAny(s, "\r\n<>\"() ,;") {
		return "", ErrInvalidEmail
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", ErrInvalidEmail
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], s[at+1:]
	if local == "" || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", ErrInvalidEmail
	}
	return strings.ToLower(s), nil
}

// NameFromEmail is the user's display name: the local part of the address, as decisions.md
// says.
func NameFromEmail(email string) string {
	if at := strings.LastIndexByte(email, '@'); at >= 0 {
		return email[:at]
	}
	return email
}
