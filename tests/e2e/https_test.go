package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// An app is served over HTTPS as soon as it is live, with a certificate of the zone's local CA
// (its root in DATA_DIR/tls/root.pem: `curl --cacert ... --resolve` works), HSTS on its own
// hostname; http:// answers 308 to the https:// address, and a name the edge does not serve
// gets no certificate.
func TestAppServedOverHTTPSWithTheLocalRoot(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "https")
	slug := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "secure home"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "secure home")

	host := slug + ".apps.localhost"
	_, port, _ := strings.Cut(s.EdgeTLS, ":")
	out, err := exec.Command("curl", "-sS", "--fail", "--http2", "-D", "-",
		"--cacert", s.DataDir+"/tls/root.pem", "--resolve", host+":"+port+":127.0.0.1",
		"https://"+host+":"+port+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("curl over https: %v\n%s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, "HTTP/2 200") || !strings.Contains(strings.ToLower(got), "strict-transport-security: max-age=") || !strings.HasSuffix(got, "secure home") {
		t.Fatalf("curl over https:\n%s", got)
	}

	req, _ := http.NewRequest(http.MethodGet, s.Edge+"/page?x=1", nil)
	req.Host = host
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := s.EdgeURL(host, "/page?x=1"); resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("http://: %d %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	other := "nobody-" + slug + ".apps.localhost"
	out, err = exec.Command("curl", "-sS", "--cacert", s.DataDir+"/tls/root.pem", "--resolve", other+":"+port+":127.0.0.1",
		"https://"+other+":"+port+"/").CombinedOutput()
	if err == nil || !strings.Contains(strings.ToLower(string(out)), "alert") {
		t.Fatalf("a name the edge does not serve: %v\n%s", err, out)
	}
}
