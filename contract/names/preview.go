package names

import (
	"crypto/rand"
	"regexp"
	"strings"
)

// A preview (API "Previews"): its handle in the API and the CLI is its name; its id, 6
// lower-case base-36 characters unique across all previews, names it in its host
// <slug-cut>-<id>.<PREVIEWS_DOMAIN>, so the host's label is one preview whatever the slug.
const (
	PreviewNamePattern = `^[a-z0-9-]{1,20}$`
	PreviewIDPattern   = `^[a-z0-9]{6}$`
	PreviewIDLen       = 6
)

var (
	previewNameShape = regexp.MustCompile(PreviewNamePattern)
	previewIDShape   = regexp.MustCompile(PreviewIDPattern)
)

const base36 = "0123456789abcdefghijklmnopqrstuvwxyz"

// ValidPreviewName reports whether name is a preview's name.
func ValidPreviewName(name string) bool { return previewNameShape.MatchString(name) }

// ValidPreviewID reports whether id is a preview's id.
func ValidPreviewID(id string) bool { return previewIDShape.MatchString(id) }

// NewPreviewID draws a fresh preview id from crypto/rand (the caller keeps it unique: the
// deploys service's unique index, drawing again on a clash).
func NewPreviewID() string {
	var b [PreviewIDLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	for i := range b {
		// 256 % 36 = 4: a bias of 4/256 on the first four digits, harmless for a handle
		// whose uniqueness the index enforces.
		b[i] = base36[int(b[i])%len(base36)]
	}
	return string(b[:])
}

// PreviewLabel is the preview's DNS label: the slug, cut so the label stays within 63
// characters and never ends in a hyphen, then "-" and the id.
func PreviewLabel(slug, id string) string {
	keep := 63 - 1 - len(id)
	if len(slug) > keep {
		slug = slug[:keep]
	}
	slug = strings.TrimRight(slug, "-")
	if slug == "" {
		return id
	}
	return slug + "-" + id
}

// PreviewHost is the preview's host under previewsDomain.
func PreviewHost(slug, id, previewsDomain string) string {
	return PreviewLabel(slug, id) + "." + previewsDomain
}

// PreviewIDFromHost reads the preview id from host when host is one label directly under
// previewsDomain that ends in a valid id; the id alone names the preview (the edge checks
// the slug part against the preview it finds).
func PreviewIDFromHost(host, previewsDomain string) (id, label string, ok bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	suffix := "." + strings.ToLower(previewsDomain)
	if !strings.HasSuffix(host, suffix) {
		return "", "", false
	}
	label = strings.TrimSuffix(host, suffix)
	if label == "" || strings.Contains(label, ".") || len(label) > 63 {
		return "", "", false
	}
	id = label
	if i := strings.LastIndexByte(label, '-'); i >= 0 {
		id = label[i+1:]
	}
	if !ValidPreviewID(id) {
		return "", "", false
	}
	return id, label, true
}

// PreviewProcess is the process a preview's instance's output carries in the logs and its
// use in the metrics: preview.<id>.
func PreviewProcess(id string) string { return "preview." + id }
