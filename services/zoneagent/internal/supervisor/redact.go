package supervisor

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
)

// minSecretLen: shorter values (ports, flags, "true") would redact ordinary output.
const minSecretLen = 8

// mask replaces a secret in output.
const mask = "[redacted]"

// Redactor masks a deploy's environment values in output lines, also in their base64 and
// URL-encoded forms, which is how secrets most often leak into logs (auth headers, URLs).
type Redactor struct{ needles []string }

// NewRedactor builds a redactor for the values of vars.
func NewRedactor(vars map[string]string) *Redactor {
	seen := map[string]bool{}
	var needles []string
	add := func(s string) {
		if len(s) >= minSecretLen && !seen[s] {
			seen[s] = true
			needles = append(needles, s)
		}
	}
	for _, v := range vars {
		if len(v) < minSecretLen {
			continue
		}
		add(v)
		add(base64.StdEncoding.EncodeToString([]byte(v)))
		add(base64.RawStdEncoding.EncodeToString([]byte(v)))
		add(base64.URLEncoding.EncodeToString([]byte(v)))
		add(base64.RawURLEncoding.EncodeToString([]byte(v)))
		add(url.QueryEscape(v))
		add(url.PathEscape(v))
	}
	// Longest first, so a value that contains another is masked whole.
	sort.Slice(needles, func(i, j int) bool { return len(needles[i]) > len(needles[j]) })
	return &Redactor{needles: needles}
}

// Redact returns line with every secret masked and how many were.
func (r *Redactor) Redact(line string) (string, int) {
	count := 0
	for _, n := range r.needles {
		if c := strings.Count(line, n); c > 0 {
			count += c
			line = strings.ReplaceAll(line, n, mask)
		}
	}
	return line, count
}
