package connlimit

import (
	"net"
	"testing"
)

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// Connections are counted per IPv4 address and per IPv6 /64.
func TestPeersAreCountedPerAddressOrSlash64(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"198.51.100.7:4000", "198.51.100.7"},
		{"[2001:db8:1:2::1]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:aaaa::9]:4001", "2001:db8:1:2::/64"},
		{"[::ffff:198.51.100.7]:4000", "198.51.100.7"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.remote)
		if err != nil {
			t.Fatal(err)
		}
		if got := peerIP(addrConn{remote: addr}); got != tc.want {
			t.Errorf("peerIP(%s) = %s, want %s", tc.remote, got, tc.want)
		}
	}
}
