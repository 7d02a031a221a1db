package e2e

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// A served custom hostname whose TXT record disappears: the owner gets one mail (apps reports,
// identity writes), and once the grace period has passed the hostname is pending again and the
// zone's edge no longer routes it, while the app goes on serving at its own address. The
// intervals are shortened from a day and 72 hours to fractions of a second.
func TestCustomHostnameLosingItsRecordStopsBeingServed(t *testing.T) {
	dns := startTXTServer(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"DNS_RESOLVER":                  dns.addr,
		"DOMAIN_CHECK_INTERVAL":         "100ms",
		"DOMAIN_RECHECK_INTERVAL":       "300ms",
		"DOMAIN_MISSING_CHECK_INTERVAL": "200ms",
		"DOMAIN_MISSING_GRACE":          "2s",
	}})
	a := s.NewAccount(t, "hostname-lost")
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "songbird"); err != nil {
		t.Fatalf("set-plan: %v\n%s", err, out)
	}
	slug := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "shop"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "shop")

	host := "lost-" + harness.Hex(3) + ".example.com"
	var claim map[string]any
	poll(t, 15*time.Second, "songbird's limit reaches apps", func() bool {
		r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/domains", Token: a.Token, Body: map[string]string{"hostname": host}})
		if r.Status == http.StatusCreated {
			claim = r.Map(t)
		}
		return r.Status == http.StatusCreated
	})
	record := "_tori-challenge." + host
	dns.set(record, claim["verification"].(map[string]any)["value"].(string))
	status := func() string {
		var list []map[string]any
		s.Get(t, "/api/apps/"+slug+"/domains", a.Token).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("domains %v", list)
		}
		return list[0]["status"].(string)
	}
	poll(t, 15*time.Second, "hostname active", func() bool { return status() == "active" })
	harness.Eventually(t, 15*time.Second, "the edge serving "+host, func() bool {
		code, body := hostGet(t, s, host)
		return code == http.StatusOK && body == "shop"
	})
	// The zone orders the active hostname's certificate ahead of any visitor and reports it;
	// the API shows it issued, with the end of the certificate the edge serves.
	var cert map[string]any
	poll(t, 30*time.Second, "the hostname's certificate issued", func() bool {
		var list []map[string]any
		s.Get(t, "/api/apps/"+slug+"/domains", a.Token).JSON(t, &list)
		cert, _ = list[0]["certificate"].(map[string]any)
		return cert != nil && cert["status"] == "issued"
	})
	if exp, _ := cert["expiresAt"].(string); exp == "" || cert["lastError"] != nil {
		t.Fatalf("issued certificate %v", cert)
	} else if at, err := time.Parse(time.RFC3339, exp); err != nil || !at.After(time.Now()) {
		t.Fatalf("expiresAt %q: %v", exp, err)
	}

	mails := s.SMTP.Count(a.Email)
	dns.set(record) // the name answers, without the record
	m, ok := s.SMTP.WaitFor(a.Email, mails, 30*time.Second)
	if !ok {
		t.Fatal("no mail about the missing record")
	}
	body := strings.ReplaceAll(m.Data, "=\r\n", "")
	for _, want := range []string{host, record, "stops serving"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the mail lacks %q:\n%s", want, m.Data)
		}
	}
	poll(t, 30*time.Second, "hostname pending again", func() bool { return status() == "pending" })
	harness.Eventually(t, 15*time.Second, "the edge no longer routing "+host, func() bool {
		code, body := hostGet(t, s, host)
		return code == http.StatusNotFound && body == "not found\n"
	})
	if code, body := edgeGet(t, s, slug, "/"); code != http.StatusOK || body != "shop" {
		t.Fatalf("the app itself: %d %q", code, body)
	}
}

// hostGet asks the zone's edge for / under an arbitrary Host. A host the edge does not serve
// gets no certificate (the handshake fails): that is answered 404, as plain HTTP answers it.
func hostGet(t testing.TB, s *harness.Stack, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.EdgeURL(host, "/"), nil)
	resp, err := s.EdgeClient().Do(req)
	if err != nil {
		var alert tls.AlertError
		if strings.Contains(err.Error(), "remote error: tls:") || errors.As(err, &alert) {
			return edgeGetPlain(t, s, host, "/")
		}
		t.Fatalf("edge: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// edgeGetPlain asks the edge's plain HTTP listener, for a host with no certificate: it answers
// 404 for a host it does not serve (and 308 to https:// for one it does).
func edgeGetPlain(t testing.TB, s *harness.Stack, host, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Edge+path, nil)
	req.Host = host
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatalf("edge: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
