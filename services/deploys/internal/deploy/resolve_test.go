package deploy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// mapResolver is a test resolver: the names it knows, and "no such host" for the rest.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	list, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range list {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestCheckResolvedRefusesNonPublicRegistries(t *testing.T) {
	r := Registries{Resolver: mapResolver{
		"registry.example.com":   {"203.0.113.10"},
		"127.0.0.1.nip.io":       {"127.0.0.1"},
		"rebind.example.com":     {"203.0.113.10", "10.0.0.7"}, // one bad answer is enough
		"metadata.example.com":   {"169.254.169.254"},
		"cgnat.example.com":      {"100.64.3.4"},
		"private.example.com":    {"192.168.1.20"},
		"v6loop.example.com":     {"::1"},
		"v6private.example.com":  {"fd12::1"},
		"mapped.example.com":     {"::ffff:127.0.0.1"},
		"dual.example.com":       {"2606:4700::1111", "8.8.8.8"},
		"trailing.example.com":   {"127.0.0.1"},
		"ported.example.com":     {"10.9.9.9"},
		"zero.example.com":       {"0.0.0.0"},
		"multicast.example.com":  {"224.0.0.251"},
		"ghcr.example.com":       {"140.82.112.33"},
		"sharedlow.example.com":  {"100.127.255.1"},
		"publicnear.example.com": {"100.128.0.1"},
	}}
	digest := "/acme/web@sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		registry string
		refusal  string // "" accepted
	}{
		{"registry.example.com", ""},
		{"registry.example.com:5000", ""},
		{"dual.example.com", ""},
		{"ghcr.example.com", ""},
		{"publicnear.example.com", ""},
		{"unknown.example.com", ""}, // does not resolve now: the pull will fail
		{"127.0.0.1.nip.io", "loopback"},
		{"127.0.0.1.nip.io:8101", "loopback"},
		{"rebind.example.com", "private"},
		{"metadata.example.com", "link-local"},
		{"cgnat.example.com", "CGNAT"},
		{"sharedlow.example.com", "CGNAT"},
		{"private.example.com", "private"},
		{"v6loop.example.com", "loopback"},
		{"v6private.example.com", "private"},
		{"mapped.example.com", "loopback"},
		{"trailing.example.com.", "loopback"},
		{"ported.example.com:443", "private"},
		{"zero.example.com", "unspecified"},
		{"multicast.example.com", "multicast"},
	} {
		err := r.CheckResolved(context.Background(), tc.registry+digest)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.registry, err)
		case tc.refusal != "" && (!errors.Is(err, ErrInvalidImage) || !strings.Contains(err.Error(), tc.refusal) || !strings.Contains(err.Error(), "registry "+tc.registry+" resolves to")):
			t.Errorf("%s: %v, want ErrInvalidImage naming %q", tc.registry, err, tc.refusal)
		}
	}
}
