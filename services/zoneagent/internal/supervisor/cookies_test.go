package supervisor

import (
	"net/http"
	"strings"
	"testing"
)

// The proxy's answer filter drops a cookie for the apps domain, keeps the app's own, and
// tells the app's log once a minute, not once an answer.
func TestProxyDropsSharedCookiesAndTellsTheApp(t *testing.T) {
	logs := &sink{}
	l := &Local{AppsDomain: "apps.example.com", Logs: logs}
	p := &proc{appID: "app", deployID: "dep"}
	modify := l.dropSharedCookies(p)
	for range 3 {
		resp := &http.Response{Header: http.Header{"Set-Cookie": {"sid=1; Domain=.apps.example.com", "own=1; Path=/"}}}
		if err := modify(resp); err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Values("Set-Cookie"); len(got) != 1 || got[0] != "own=1; Path=/" {
			t.Fatalf("left %q", got)
		}
	}
	if n := len(logs.lines); n != 1 || !strings.HasPrefix(logs.lines[0], "system: the edge dropped Set-Cookie sid: its Domain is apps.example.com") {
		t.Fatalf("app log: %q", logs.all())
	}
}
