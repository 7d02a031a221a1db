package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/tests/e2e/harness"
)

// Drain error codes (DESIGN40, "Log drains").
const (
	codeDrainForbidden = "drain_address_forbidden"
	codeDrainLimit     = "drain_limit_reached"
	codeInvalidParam   = "invalid_parameter"
)

// drainReceiver is the customer's collector: an HTTPS server on loopback with a certificate
// of a CA made here, which the stack trusts for this one host (LOGS_DRAIN_TEST_HOST/_CA). It
// keeps every body it accepted, and answers 500 while failing.
type drainReceiver struct {
	host   string // 127.0.0.1:<port>, bound before the stack starts
	caFile string

	mu      sync.Mutex
	failing bool
	refused int
	posts   []drainPost
}

type drainPost struct {
	header http.Header
	body   []byte
}

func startDrainReceiver(t *testing.T) *drainReceiver {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e drain receiver CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &drainReceiver{caFile: filepath.Join(t.TempDir(), "drain-ca.pem")}
	if err := os.WriteFile(rcv.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv.host = ln.Addr().String()
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return rcv
}

func (rcv *drainReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.failing {
		rcv.refused++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rcv.posts = append(rcv.posts, drainPost{header: r.Header.Clone(), body: body})
	w.WriteHeader(http.StatusOK)
}

func (rcv *drainReceiver) setFailing(on bool) {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	rcv.failing = on
}

func (rcv *drainReceiver) refusedCount() int {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return rcv.refused
}

// drainLine is one NDJSON line a drain delivered, with the id a receiver drops repeats by.
type drainLine struct {
	id     string
	fields map[string]any
}

// lines are every line the receiver accepted for drain id, in the order they arrived, each
// body checked: NDJSON, Tori-Signature the HMAC-SHA256 of the body keyed with the secret as
// the create answer shows it, and every line the app's, with its process and an id.
func (rcv *drainReceiver) lines(t testing.TB, id, secret, slug string) []drainLine {
	t.Helper()
	rcv.mu.Lock()
	posts := append([]drainPost(nil), rcv.posts...)
	rcv.mu.Unlock()
	var out []drainLine
	for _, p := range posts {
		if p.header.Get("Tori-Drain-Id") != id {
			continue
		}
		if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
			t.Fatalf("drain %s: Content-Type %q", id, ct)
		}
		checkDrainSignature(t, id, secret, p)
		for _, raw := range bytes.Split(p.body, []byte("\n")) {
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("drain %s: a line is not JSON: %q", id, raw)
			}
			lineID := fmt.Sprint(m["id"])
			if m["id"] == nil || lineID == "" {
				t.Fatalf("drain %s: a line without an id: %s", id, raw)
			}
			if _, ok := m["process"]; !ok || m["app"] != slug {
				t.Fatalf("drain %s: a line without app %s or process: %s", id, slug, raw)
			}
			out = append(out, drainLine{id: lineID, fields: m})
		}
	}
	return out
}

func checkDrainSignature(t testing.TB, id, secret string, p drainPost) {
	t.Helper()
	got := p.header.Get("Tori-Signature")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(p.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); hmac.Equal([]byte(got), []byte(want)) {
		return
	}
	// Say so when the key was the secret's bytes rather than the secret as shown: a receiver
	// only has what the create answer showed.
	if raw, err := hex.DecodeString(secret); err == nil {
		mac := hmac.New(sha256.New, raw)
		mac.Write(p.body)
		if "sha256="+hex.EncodeToString(mac.Sum(nil)) == got {
			t.Fatalf("drain %s: Tori-Signature is keyed with the hex-decoded secret; a receiver keys it with the secret as shown", id)
		}
	}
	t.Fatalf("drain %s: Tori-Signature %q is not sha256=HMAC-SHA256(secret, body)", id, got)
}

// byMessage is the first line of each message, and how many lines repeated one already seen
// (by id, which is what a receiver drops repeats by).
func byMessage(lines []drainLine) (first map[string]drainLine, order []string, repeats int) {
	first = map[string]drainLine{}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l.id] {
			repeats++
			continue
		}
		seen[l.id] = true
		msg, _ := l.fields["message"].(string)
		if _, ok := first[msg]; !ok {
			first[msg] = l
			order = append(order, msg)
		}
	}
	return first, order, repeats
}

// publishAppLines writes lines as the zone writes an app's output: on the bus, process web.1.
func publishAppLines(t testing.TB, s *harness.Stack, appID string, messages []string) {
	t.Helper()
	now := time.Now()
	var entries []*logsv1.LogEntry
	for i, m := range messages {
		entries = append(entries, &logsv1.LogEntry{AppId: appID, DeployId: uuid.NewString(), Stream: "stdout", Process: "web.1",
			Timestamp: timestamppb.New(now.Add(time.Duration(i) * time.Microsecond)), Message: m})
	}
	s.PublishEvent(t, "zone.logs.batch", &logsv1.LogBatch{Entries: entries})
}

func numbered(prefix string, from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("%s-%04d", prefix, i))
	}
	return out
}

// drainApp logs one line per request.
const drainApp = `
const http = require('http');
http.createServer((req, res) => { console.log('drain-hello ' + req.url); res.end('ok'); }).listen(process.env.PORT, '127.0.0.1');
`

func drainsPath(slug string) string { return "/api/apps/" + slug + "/drains" }

// testDrains: an HTTPS drain receives the app's lines signed within 5 s; a receiver failing
// for 30 s loses none of them; targets refused in order (malformed, forbidden, over the
// plan); the test route delivers; another team's drain is 404.
func testDrains(t *testing.T, s *harness.Stack, rcv *drainReceiver) {
	a := s.NewAccount(t, "drains")
	r := post(s, t, "/api/apps", a.Token, map[string]string{"kind": "service"})
	expectStatus(t, "create app", r, http.StatusCreated)
	slug, appID := r.Map(t)["slug"].(string), r.Map(t)["id"].(string)
	// A real app's output as well, later: it builds meanwhile.
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r = deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": drainApp}), "")
	expectStatus(t, "deploy", r, http.StatusCreated)
	deployID := r.Map(t)["id"].(string)

	target := "https://" + rcv.host + "/ingest"
	r = post(s, t, drainsPath(slug), a.Token, map[string]string{"url": target})
	expectStatus(t, "create drain", r, http.StatusCreated)
	created := r.Map(t)
	expectKeys(t, "created Drain", created, "id", "url", "kind", "status", "createdAt", "lastDeliveryAt", "lastError", "dropped24h", "delivered24h", "secret")
	drainID, _ := created["id"].(string)
	secret, _ := created["secret"].(string)
	if uuid.Validate(drainID) != nil || created["url"] != target || created["kind"] != "https" || created["status"] != "active" ||
		created["dropped24h"] != float64(0) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(secret) {
		t.Fatalf("created drain: %v", created)
	}
	if _, err := time.Parse(time.RFC3339, created["createdAt"].(string)); err != nil {
		t.Fatalf("createdAt %v", created["createdAt"])
	}
	// The secret is shown once.
	one := s.Get(t, drainsPath(slug)+"/"+drainID, a.Token)
	expectStatus(t, "GET drain", one, http.StatusOK)
	expectKeys(t, "Drain", one.Map(t), "id", "url", "kind", "status", "createdAt", "lastDeliveryAt", "lastError", "dropped24h", "delivered24h")
	list := s.Get(t, drainsPath(slug), a.Token)
	expectStatus(t, "list drains", list, http.StatusOK)
	var drains []map[string]any
	list.JSON(t, &drains)
	if len(drains) != 1 || drains[0]["id"] != drainID || strings.Contains(string(list.Body), secret) {
		t.Fatalf("drains listed: %s", list.Body)
	}

	// Lines written now reach the receiver within 5 s, signed.
	first := numbered("drain-first", 0, 5)
	written := time.Now()
	publishAppLines(t, s, appID, first)
	within(t, written, 5*time.Second, "the first lines at the receiver", func() bool {
		got, _, _ := byMessage(rcv.lines(t, drainID, secret, slug))
		for _, m := range first {
			if _, ok := got[m]; !ok {
				return false
			}
		}
		return true
	})
	got, _, _ := byMessage(rcv.lines(t, drainID, secret, slug))
	if l := got[first[0]].fields; l["process"] != "web.1" || l["stream"] != "stdout" {
		t.Fatalf("a delivered line: %v", l)
	}

	// The receiver fails for 30 s while the app writes; then every line arrives.
	outageStart := time.Now()
	rcv.setFailing(true)
	var outage []string
	for i := 0; time.Since(outageStart) < 30*time.Second; i++ {
		batch := numbered("drain-outage", i*20, 20)
		publishAppLines(t, s, appID, batch)
		outage = append(outage, batch...)
		time.Sleep(3 * time.Second)
	}
	rcv.setFailing(false)
	if rcv.refusedCount() == 0 {
		t.Fatal("the drain sent nothing while the receiver was failing")
	}
	var order []string
	var repeats int
	pollEvery(t, 60*time.Second, 250*time.Millisecond, fmt.Sprintf("the %d lines written during the outage", len(outage)), func() bool {
		got, order, repeats = byMessage(rcv.lines(t, drainID, secret, slug))
		for _, m := range outage {
			if _, ok := got[m]; !ok {
				return false
			}
		}
		return true
	})
	t.Logf("after the outage: %d refused posts, %d lines repeated by id, all %d outage lines in %s", rcv.refusedCount(), repeats, len(outage), time.Since(outageStart).Round(time.Second))
	// In order: each outage line first arrived after the one written before it.
	pos := map[string]int{}
	for i, m := range order {
		pos[m] = i
	}
	for i := 1; i < len(outage); i++ {
		if pos[outage[i]] < pos[outage[i-1]] {
			t.Fatalf("%s arrived before %s", outage[i], outage[i-1])
		}
	}
	pollEvery(t, 15*time.Second, 500*time.Millisecond, "the drain active again, nothing dropped", func() bool {
		d := s.Get(t, drainsPath(slug)+"/"+drainID, a.Token).Map(t)
		if d["dropped24h"] != float64(0) {
			t.Fatalf("the drain dropped lines: %v", d)
		}
		n, _ := d["delivered24h"].(float64)
		return d["status"] == "active" && d["lastDeliveryAt"] != nil && int(n) >= len(first)+len(outage)
	})

	// The app's own output, from its process on the zone.
	waitStatus(t, s, a.Token, slug, deployID, "live")
	path := "/hello-" + harness.Hex(3)
	pollEvery(t, 30*time.Second, 200*time.Millisecond, "the app to answer", func() bool {
		status, _ := edgeGet(t, s, slug, path)
		return status == http.StatusOK
	})
	asked := time.Now()
	within(t, asked, 5*time.Second, "the app's own line at the receiver", func() bool {
		got, _, _ := byMessage(rcv.lines(t, drainID, secret, slug))
		l, ok := got["drain-hello "+path]
		if ok && (l.fields["process"] != "web.1" || l.fields["stream"] != "stdout") {
			t.Fatalf("the app's line: %v", l.fields)
		}
		return ok
	})

	// The test route sends one line and says how it went.
	r = post(s, t, drainsPath(slug)+"/"+drainID+"/test", a.Token, nil)
	expectStatus(t, "test the drain", r, http.StatusOK)
	if res := r.Map(t); res["delivered"] != true || res["status"] != float64(200) {
		t.Fatalf("test answer: %s", r.Body)
	}
	found := false
	for _, l := range rcv.lines(t, drainID, secret, slug) {
		if m, _ := l.fields["message"].(string); strings.Contains(m, "Tori drain test") {
			found = true
		}
	}
	if !found {
		t.Fatal("the test line did not reach the receiver")
	}

	drainRefusals(t, s, a, slug, rcv)
	drainsAcrossTeams(t, s, a, slug, drainID, rcv)

	expectStatus(t, "delete the drain", s.Do(t, harness.Request{Method: http.MethodDelete, Path: drainsPath(slug) + "/" + drainID, Token: a.Token}), http.StatusNoContent)
	expectStatus(t, "GET a deleted drain", s.Get(t, drainsPath(slug)+"/"+drainID, a.Token), http.StatusNotFound)
}

// drainRefusals, with the app at nestling's one drain: a malformed target is 400
// invalid_parameter, a forbidden one 400 drain_address_forbidden (both before the plan's
// 403), and a good one 403 drain_limit_reached.
func drainRefusals(t *testing.T, s *harness.Stack, a harness.Account, slug string, rcv *drainReceiver) {
	t.Helper()
	for _, u := range []string{
		"http://" + rcv.host + "/ingest",
		"ftp://collector.example.com/",
		"not a url",
		"https://",
		"https://collector.example.com:70000/",
		"https://collector.example.com/" + strings.Repeat("a", 2048),
	} {
		e := expectCode(t, "drain to "+u[:min(len(u), 60)], post(s, t, drainsPath(slug), a.Token, map[string]string{"url": u}), http.StatusBadRequest, codeInvalidParam)
		if e.Message == "" {
			t.Fatalf("drain to %s: no message", u)
		}
	}
	for _, u := range []string{
		"https://10.0.0.1/",
		"https://127.0.0.1:1/", // loopback, not the test host
		"https://localhost/",   // a name that resolves to loopback
		"https://169.254.169.254/",
		"https://100.64.0.1/",
		"https://[::1]/",
		"syslog+tls://192.168.1.10:6514",
	} {
		expectCode(t, "drain to "+u, post(s, t, drainsPath(slug), a.Token, map[string]string{"url": u}), http.StatusBadRequest, codeDrainForbidden)
	}
	e := expectCode(t, "a second drain on nestling", post(s, t, drainsPath(slug), a.Token, map[string]string{"url": "https://" + rcv.host + "/second"}),
		http.StatusForbidden, codeDrainLimit)
	if e.Limit == nil || *e.Limit != 1 || e.Plan != "nestling" {
		t.Fatalf("drain limit body %+v", e)
	}
}

// drainsAcrossTeams: another account's drain (a syslog one) is not found through this app,
// and this app's drains are not found by the other account.
func drainsAcrossTeams(t *testing.T, s *harness.Stack, a harness.Account, slug, drainID string, rcv *drainReceiver) {
	t.Helper()
	b := s.NewAccount(t, "drains-other")
	other := createApp(t, s, b.Token, "service")
	r := post(s, t, drainsPath(other), b.Token, map[string]string{"url": "syslog+tls://" + rcv.host})
	expectStatus(t, "create a syslog drain", r, http.StatusCreated)
	theirs := r.Map(t)
	if theirs["kind"] != "syslog" || theirs["secret"] != nil {
		t.Fatalf("syslog drain: %s", r.Body)
	}
	theirID := theirs["id"].(string)
	for what, req := range map[string]harness.Request{
		"their drain through my app":        {Method: http.MethodGet, Path: drainsPath(slug) + "/" + theirID, Token: a.Token},
		"delete their drain through my app": {Method: http.MethodDelete, Path: drainsPath(slug) + "/" + theirID, Token: a.Token},
		"test their drain through my app":   {Method: http.MethodPost, Path: drainsPath(slug) + "/" + theirID + "/test", Token: a.Token},
		"their drain through their app":     {Method: http.MethodGet, Path: drainsPath(other) + "/" + theirID, Token: a.Token},
		"my drains, as them":                {Method: http.MethodGet, Path: drainsPath(slug), Token: b.Token},
		"my drain, as them":                 {Method: http.MethodGet, Path: drainsPath(slug) + "/" + drainID, Token: b.Token},
		"delete my drain, as them":          {Method: http.MethodDelete, Path: drainsPath(slug) + "/" + drainID, Token: b.Token},
		"a drain on my app, as them":        {Method: http.MethodPost, Path: drainsPath(slug), Token: b.Token, Body: map[string]string{"url": "https://" + rcv.host + "/x"}},
		"no such drain":                     {Method: http.MethodGet, Path: drainsPath(slug) + "/" + uuid.NewString(), Token: a.Token},
	} {
		expectStatus(t, what, s.Do(t, req), http.StatusNotFound)
	}
	expectStatus(t, "their drain stays", s.Get(t, drainsPath(other)+"/"+theirID, b.Token), http.StatusOK)
}
