package clientip

import (
	"net/netip"
	"testing"
)

func TestResolve(t *testing.T) {
	proxies := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"),
	}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies: the peer, whatever the header says", nil, "203.0.113.9", []string{"1.2.3.4"}, "203.0.113.9"},
		{"untrusted peer: header ignored", proxies, "203.0.113.9", []string{"1.2.3.4"}, "203.0.113.9"},
		{"trusted peer without header: the peer", proxies, "10.1.1.1", nil, "10.1.1.1"},
		{"trusted peer: right-most entry", proxies, "10.1.1.1", []string{"198.51.100.5"}, "198.51.100.5"},
		{"spoofed left entries are ignored", proxies, "10.1.1.1", []string{"6.6.6.6, 198.51.100.5"}, "198.51.100.5"},
		{"trusted hops are skipped from the right", proxies, "10.1.1.1", []string{"6.6.6.6, 198.51.100.5, 192.0.2.7, 10.2.2.2"}, "198.51.100.5"},
		{"several header lines read as one list", proxies, "10.1.1.1", []string{"6.6.6.6, 198.51.100.5", "10.2.2.2"}, "198.51.100.5"},
		{"malformed entry stops at the last trusted hop", proxies, "10.1.1.1", []string{"198.51.100.5, garbage, 10.2.2.2"}, "10.2.2.2"},
		{"all trusted: the left-most", proxies, "10.1.1.1", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"ports and brackets are accepted", proxies, "10.1.1.1", []string{"198.51.100.5:4711"}, "198.51.100.5"},
		{"IPv6 with brackets", proxies, "2001:db8::1", []string{"[2001:db9::5]"}, "2001:db9::5"},
		{"IPv4-mapped peer is matched as IPv4", proxies, "::ffff:10.1.1.1", []string{"198.51.100.5"}, "198.51.100.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := New(tc.trusted).Resolve(netip.MustParseAddr(tc.peer), tc.xff)
			if got.String() != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Per-address limits count IPv4 per address and IPv6 per /64: every address of one /64
// shares a bucket, the next /64 has its own.
func TestBucketIsTheSlash64ForIPv6(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"198.51.100.7", "198.51.100.7"},
		{"::ffff:198.51.100.7", "198.51.100.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"::1", "::/64"},
	} {
		if got := Bucket(netip.MustParseAddr(tc.in)); got != tc.want {
			t.Errorf("Bucket(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
