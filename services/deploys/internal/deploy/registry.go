package deploy

import (
	"fmt"
	"net/netip"
	"strings"

	"tori.dev/contract/netrange"
)

// Registries is which registries images may come from (DEPLOYS_IMAGE_REGISTRIES). The zero
// value allows any registry named by a public DNS name. Whatever the list says, a registry
// on a loopback, link-local, private or otherwise non-public address, or named like one
// (localhost, a single label, .local, .internal...), is refused: the zone pulls from inside
// the platform's network, and an image reference must not be a way to reach it.
type Registries struct {
	allowed map[string]bool // host or host:port, lowercase; empty: any public name
	// Resolver looks registry names up for CheckResolved; nil: the system's.
	Resolver Resolver
}

// NewRegistries reads a list of registry hosts (host or host:port).
func NewRegistries(list []string) (Registries, error) {
	r := Registries{allowed: map[string]bool{}}
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if err := publicHost(e); err != nil {
			return Registries{}, fmt.Errorf("registry %q: %w", e, err)
		}
		r.allowed[e] = true
	}
	return r, nil
}

// ParseImage checks an image reference's form and its registry.
func (r Registries) ParseImage(s string) (string, error) {
	if !imageRe.MatchString(s) {
		return "", fmt.Errorf("%w: want <registry>/<repo>@sha256:<64 lowercase hex>", ErrInvalidImage)
	}
	host := strings.ToLower(s[:strings.IndexByte(s, '/')])
	if err := publicHost(host); err != nil {
		return "", fmt.Errorf("%w: registry %s: %v", ErrInvalidImage, host, err)
	}
	if len(r.allowed) > 0 && !r.allowed[host] {
		return "", fmt.Errorf("%w: registry %s is not among the allowed registries", ErrInvalidImage, host)
	}
	return s, nil
}

// nonPublicSuffixes are names that resolve inside a private network when they resolve at all
// (RFC 6761's .localhost, mDNS's .local, RFC 8375's .home.arpa, ICANN's private-use
// .internal, and common LAN suffixes). .test and .example never resolve and stay usable in
// tests.
var nonPublicSuffixes = []string{".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".lan"}

// publicHost accepts host[:port] when host is a public DNS name. IP literals are refused:
// a registry is named, and a literal is the easy way to point at a private address.
func publicHost(hostport string) error {
	host := hostport
	if strings.HasPrefix(host, "[") { // [v6]:port
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return fmt.Errorf("malformed address")
		}
		host = host[1:end]
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		if strings.Count(host, ":") > 1 {
			// an IPv6 literal without brackets is not a registry reference
			return fmt.Errorf("malformed address")
		}
		port := host[i+1:]
		host = host[:i]
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return fmt.Errorf("malformed port")
		}
	}
	host = strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return ipRefusal(a)
	}
	if looksNumeric(host) {
		// 127.1, 0x7f.1, 2130706433: forms some resolvers still read as addresses.
		return fmt.Errorf("an address, not a name")
	}
	if host == "localhost" || !strings.Contains(host, ".") {
		return fmt.Errorf("not a public DNS name")
	}
	for _, suf := range nonPublicSuffixes {
		if strings.HasSuffix(host, suf) {
			return fmt.Errorf("not a public DNS name")
		}
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") ||
			strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return fmt.Errorf("not a valid DNS name")
		}
	}
	return nil
}

// ipRefusal names what an address given as a registry's host is: a refused range of the
// contract's (netrange, the zone's egress deny list) by its kind, and any other address as
// not a name.
func ipRefusal(a netip.Addr) error {
	if r, refused := netrange.Of(a.Unmap()); refused {
		return fmt.Errorf("a %s address", r.Kind)
	}
	return fmt.Errorf("an IP address, not a DNS name")
}

// looksNumeric reports a host made only of digits, dots and hex markers: no public DNS name
// has a top-level label that is all digits.
func looksNumeric(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if strings.HasPrefix(last, "0x") {
		return true
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}
