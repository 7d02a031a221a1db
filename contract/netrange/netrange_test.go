package netrange

import (
	"net/netip"
	"testing"
)

func TestRefusedRanges(t *testing.T) {
	for _, tc := range []struct {
		addr string
		kind string // "" for a public address
	}{
		{"0.0.0.0", "unspecified"}, {"10.1.2.3", "private"}, {"100.64.0.1", "shared (CGNAT)"},
		{"100.128.0.1", ""}, {"127.0.0.1", "loopback"}, {"169.254.169.254", "link-local"},
		{"172.16.0.1", "private"}, {"172.32.0.1", ""}, {"192.0.0.8", "reserved"},
		{"192.168.1.1", "private"}, {"198.19.255.255", "reserved"}, {"224.0.0.1", "multicast"},
		{"255.255.255.255", "reserved"}, {"8.8.8.8", ""}, {"1.1.1.1", ""},
		{"::1", "loopback"}, {"::", "loopback"}, {"::ffff:8.8.8.8", "IPv4-mapped"},
		{"64:ff9b:1::1", "private"}, {"fd00::1", "private"}, {"fe80::1", "link-local"},
		{"ff02::1", "multicast"}, {"2606:4700::1111", ""},
	} {
		r, refused := Of(netip.MustParseAddr(tc.addr))
		if refused != (tc.kind != "") || r.Kind != tc.kind {
			t.Errorf("Of(%s) = %q, %v; want %q", tc.addr, r.Kind, refused, tc.kind)
		}
	}
}

// Each range is written in its canonical form, so the firewall's text is the list's.
func TestRangesAreCanonical(t *testing.T) {
	for _, r := range Refused {
		if r.Prefix != r.Prefix.Masked() || r.Kind == "" {
			t.Errorf("%v (%q): not masked, or no kind", r.Prefix, r.Kind)
		}
	}
}
