package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/publicsuffix"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// cookieServer sets, on /set, a cookie for the whole apps domain and a host-only one, and
// answers every request with the cookies it was sent.
const cookieServer = `
const http = require('http');
http.createServer((req, res) => {
  if (req.url === '/set') {
    res.setHeader('Set-Cookie', ['shared=planted; Path=/; Domain=apps.localhost', 'own=mine; Path=/; HttpOnly']);
  }
  res.end('cookies:' + (req.headers.cookie || ''));
}).listen(process.env.PORT, '127.0.0.1');
`

// A cookie app A's server sets for the whole apps domain never reaches app B, another
// account's, through the edge (a browser's cookie jar, with the Public Suffix List, visiting
// A then B); A's host-only cookie still comes back to A, and A's own log says why the other
// was dropped.
func TestAppCookieForTheAppsDomainNeverReachesAnotherApp(t *testing.T) {
	s := defaultStack(t)
	deployCookieApp := func(name string) (string, string) {
		a := s.NewAccount(t, name)
		slug := createApp(t, s, a.Token, "service")
		manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
		r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": cookieServer}), "")
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy %s: %d %s", name, r.Status, r.Body)
		}
		waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
		waitEdge(t, s, slug, "/", "cookies:")
		return slug, a.Token
	}
	slugA, tokenA := deployCookieApp("cookie-a")
	slugB, _ := deployCookieApp("cookie-b")

	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		t.Fatal(err)
	}
	client := s.EdgeClient()
	client.Jar = jar
	get := func(slug, path string) string {
		t.Helper()
		resp, err := client.Get(s.EdgeURL(slug+".apps.localhost", path))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s%s: %d %s", slug, path, resp.StatusCode, b)
		}
		return string(b)
	}
	get(slugA, "/set")
	if got := get(slugB, "/"); strings.Contains(got, "shared=") {
		t.Fatalf("app B received app A's cookie: %q", got)
	}
	if got := get(slugA, "/"); got != "cookies:own=mine" {
		t.Fatalf("app A's own cookies: %q, want its host-only cookie alone", got)
	}

	logsPath := "/api/apps/" + slugA + "/logs?" + url.Values{"start": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		"end": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "limit": {"500"}}.Encode()
	harness.Eventually(t, 20*time.Second, "app A's log to tell of the dropped cookie", func() bool {
		var page struct {
			Entries []struct {
				Message string `json:"message"`
			} `json:"entries"`
		}
		s.Get(t, logsPath, tokenA).JSON(t, &page)
		for _, e := range page.Entries {
			if strings.Contains(e.Message, "the edge dropped Set-Cookie shared: its Domain is apps.localhost") {
				return true
			}
		}
		return false
	})
}

// With a public-CA-like ACME server (Pebble) and per-host certificates on demand: one
// account churning new app hostnames stops at its daily cap, and meanwhile another account's
// first certificate is issued and a certificate of the capped account is renewed before it
// expires (renewals never count against an account). The zone's metrics count each.
func TestCertificateBudgetNoTenantCanStarve(t *testing.T) {
	const validity = 90 * time.Second
	pebble := testinfra.StartPebble(t, validity)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN":                     "100000",
		"APPS_DOMAIN":                              "apps.test",
		"ZONE_ACME_CA":                             pebble.Directory,
		"ZONE_ACME_CA_ROOT":                        pebble.APIRootFile,
		"ZONE_ACME_ORDERS_PER_HOUR":                "400",
		"ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY": "2",
		"ZONE_TLS_RENEW_CHECK_INTERVAL":            "1s",
	}})
	handshake := func(host string) (*x509.Certificate, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", s.EdgeTLS, &tls.Config{ServerName: host, RootCAs: pebble.Roots})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0], nil
	}
	liveSite := func(token string) string {
		slug := createApp(t, s, token, "static")
		r := deployFiles(t, s, token, slug, sitePart{"index.html", "hi"})
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		waitStatus(t, s, token, slug, r.Map(t)["id"].(string), "live")
		return slug + ".apps.test"
	}
	// The first handshakes right after a deploy may find the name not yet routed (a TLS
	// alert, no order): asked until one gets a certificate.
	certificate := func(host string) *x509.Certificate {
		var leaf *x509.Certificate
		harness.Eventually(t, 30*time.Second, "a certificate for "+host, func() bool {
			c, err := handshake(host)
			leaf = c
			return err == nil
		})
		return leaf
	}

	greedy := s.NewAccount(t, "greedy")
	first := liveSite(greedy.Token)
	firstCert := certificate(first)
	certificate(liveSite(greedy.Token))
	// The third new hostname within the day is refused, however often it is asked for: an
	// alert at first may be the name not yet routed, so it is believed once the refusal was
	// counted.
	third := liveSite(greedy.Token)
	const refusedByCap = `tori_edge_certificate_orders_total{kind="new",result="limited_account"}`
	before := metric(t, s, refusedByCap)
	harness.Eventually(t, 30*time.Second, "the greedy account's third order refused at its cap", func() bool {
		_, err := handshake(third)
		if err == nil {
			t.Fatalf("a third certificate for the greedy account within the day")
		}
		return metric(t, s, refusedByCap) > before
	})
	if _, err := handshake(third); err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
		t.Fatalf("the greedy account's third hostname: %v, want a TLS alert", err)
	}

	// Another account's first certificate is issued meanwhile.
	modest := s.NewAccount(t, "modest")
	certificate(liveSite(modest.Token))

	// The capped account's first certificate is renewed before it expires.
	harness.Eventually(t, time.Until(firstCert.NotAfter), "the capped account's certificate renewed before it expires", func() bool {
		c, err := handshake(first)
		return err == nil && c.SerialNumber.Cmp(firstCert.SerialNumber) != 0 && c.NotAfter.After(firstCert.NotAfter)
	})
	if n := metric(t, s, `tori_edge_certificate_orders_total{kind="renewal",result="obtained"}`); n < 1 {
		t.Fatalf("renewals obtained: %v", n)
	}
	if n := metric(t, s, `tori_edge_certificate_refusals_total{kind="new",reason="account_daily_cap"}`); n < 1 {
		t.Fatalf("refusals by the account's daily cap: %v", n)
	}
	if n := metric(t, s, `tori_edge_certificate_refusals_total{kind="renewal",reason="account_daily_cap"}`); n != 0 {
		t.Fatalf("renewals refused by an account's cap: %v", n)
	}
}

// metric reads one sample of the zone agent's /metrics (0 when absent).
func metric(t testing.TB, s *harness.Stack, series string) float64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+s.Env["ZONEAGENT_ADDR"]+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			json.Unmarshal([]byte(v), &f)
			return f
		}
	}
	return 0
}
