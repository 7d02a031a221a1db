// Package netrange is the contract's refused address ranges: the destinations no tenant's
// traffic reaches. The zone's sandbox firewall refuses them to every app's sockets
// (nftables), and pkg/netguard refuses them to the names a customer chooses (an image's
// registry), so a registry is held to what an app's own sockets are. Both read this list,
// so they cannot disagree.
package netrange

import "net/netip"

// Range is a refused range and the word a refusal names it by.
type Range struct {
	Prefix netip.Prefix
	Kind   string
}

// Refused is every refused range: loopback, private, link-local, shared (CGNAT), multicast
// and reserved. What is left is the public internet.
var Refused = []Range{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/127"), "loopback"},
	// An IPv4-mapped IPv6 address is its IPv4 address in disguise. A check that can unmap
	// (netguard) judges the IPv4 address instead and never meets this range; a firewall,
	// which cannot, refuses the whole range.
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Of is the refused range that holds a, and whether one does. a is taken as it is: unmap an
// IPv4-mapped address first to judge the IPv4 address it carries.
func Of(a netip.Addr) (Range, bool) {
	for _, r := range Refused {
		if r.Prefix.Contains(a) {
			return r, true
		}
	}
	return Range{}, false
}
