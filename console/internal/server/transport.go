package server

import (
	"net"
	"net/http"
	"time"
)

// apiTransport carries the console's calls to the API: the default transport's settings,
// leaving from source when one is set (Config.APISourceAddr).
func apiTransport(source net.IP) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if source != nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: source}}
		t.DialContext = d.DialContext
	}
	return t
}
