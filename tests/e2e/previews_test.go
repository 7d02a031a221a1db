package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/access"
	"tori.dev/contract/names"
	"tori.dev/tests/e2e/harness"
)

// Preview error codes (DESIGN40, "Previews").
const (
	codePreviewLimit    = "preview_limit_reached"
	codePreviewExpired  = "preview_expired"
	nestlingPreviewTTLs = 24 * 3600 // nestling's previewMaxTtlHours, and so its default TTL
)

// testPreviews: a preview serves its own content at its own host and leaves the live app
// alone, a service preview's environment is the app's without the database unless asked,
// a short TTL ends in 410, promote makes a preview live, the plan's one preview per app, and
// a viewer may look but not create. Each part has an account of its own (nestling runs one
// deploy at a time per account) and they run at the same time.
func testPreviews(t *testing.T, s *harness.Stack) {
	concurrently(t, map[string]func(*testing.T){
		"ExpiresAfterTTL":         func(t *testing.T) { previewExpires(t, s) },
		"StaticLimitsAndPromote":  func(t *testing.T) { previewStatic(t, s) },
		"ServiceEnvironment":      func(t *testing.T) { previewServiceEnv(t, s) },
		"ViewerMayNotCreate":      func(t *testing.T) { previewViewer(t, s) },
		"EdgeUnknownAndWrongSlug": func(t *testing.T) { previewUnknownHosts(t, s) },
	})
}

// previewForm is a preview's multipart payload: a static site's files or a source tarball,
// and the preview's own fields. The fields go first, so a service reading the stream knows
// the preview's name, TTL, environment and database before any file.
type previewForm struct {
	files  []sitePart
	source []byte
	fields map[string]string
}

func (f previewForm) body() (string, []byte) {
	const boundary = "e2e-preview-boundary"
	var b bytes.Buffer
	keys := make([]string, 0, len(f.fields))
	for k := range f.fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, k, f.fields[k])
	}
	for _, p := range f.files {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=%q\r\n\r\n%s\r\n", boundary, p.name, p.body)
	}
	if f.source != nil {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"source\"; filename=\"app.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n", boundary)
		b.Write(f.source)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, b.Bytes()
}

func createPreview(t testing.TB, s *harness.Stack, token, slug string, f previewForm) *harness.Response {
	t.Helper()
	ct, body := f.body()
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/previews", Token: token,
		Body: bytes.NewReader(body), Header: map[string]string{"Content-Type": ct}})
}

// previewFields are a preview's form fields; env is marshalled as the JSON object the `env`
// field holds.
func previewFields(name string, ttlSeconds int, env map[string]string, database string) map[string]string {
	f := map[string]string{}
	if name != "" {
		f["name"] = name
	}
	if ttlSeconds != 0 {
		f["ttlSeconds"] = strconv.Itoa(ttlSeconds)
	}
	if env != nil {
		raw, _ := json.Marshal(env)
		f["env"] = string(raw)
	}
	if database != "" {
		f["database"] = database
	}
	return f
}

// previewJSON is a Preview as the API answers it.
type previewJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	App        string          `json:"app"`
	URL        string          `json:"url"`
	Status     string          `json:"status"`
	DeployID   string          `json:"deployId"`
	Database   string          `json:"database"`
	EnvKeys    []string        `json:"envKeys"`
	TTLSeconds int             `json:"ttlSeconds"`
	ExpiresAt  string          `json:"expiresAt"`
	CreatedAt  string          `json:"createdAt"`
	UpdatedAt  string          `json:"updatedAt"`
	Error      json.RawMessage `json:"error"`
}

// checkPreview checks a Preview's members and the rules between them, and decodes it.
func checkPreview(t *testing.T, what string, r *harness.Response, slug string) previewJSON {
	t.Helper()
	m := r.Map(t)
	expectKeys(t, what, m, "id", "name", "app", "url", "status", "deployId", "database", "envKeys", "ttlSeconds", "expiresAt", "createdAt", "updatedAt", "error")
	var p previewJSON
	r.JSON(t, &p)
	if !names.ValidPreviewID(p.ID) || !names.ValidPreviewName(p.Name) || p.App != slug || p.DeployID == "" {
		t.Fatalf("%s: %s", what, r.Body)
	}
	if want := "https://" + names.PreviewHost(slug, p.ID, previewsDomain); p.URL != want {
		t.Fatalf("%s: url %q, want %q", what, p.URL, want)
	}
	if !slices.Contains([]string{"deploying", "ready", "failed", "expired", "deleted"}, p.Status) || (p.Database != "none" && p.Database != "shared") {
		t.Fatalf("%s: status %q database %q", what, p.Status, p.Database)
	}
	if p.EnvKeys == nil {
		t.Fatalf("%s: envKeys is not a list: %s", what, r.Body)
	}
	created, err1 := time.Parse(time.RFC3339, p.CreatedAt)
	expires, err2 := time.Parse(time.RFC3339, p.ExpiresAt)
	_, err3 := time.Parse(time.RFC3339, p.UpdatedAt)
	if err1 != nil || err2 != nil || err3 != nil || !expires.After(created) {
		t.Fatalf("%s: times %s", what, r.Body)
	}
	return p
}

func previewPath(slug, id string) string { return "/api/apps/" + slug + "/previews/" + id }

// waitPreview waits until the preview reaches want; failed on the way fails the test.
func waitPreview(t *testing.T, s *harness.Stack, token, slug, id, want string, within time.Duration) previewJSON {
	t.Helper()
	var p previewJSON
	pollEvery(t, within, 250*time.Millisecond, "preview "+id+" "+want, func() bool {
		r := s.Get(t, previewPath(slug, id), token)
		if r.Status != http.StatusOK {
			t.Fatalf("get preview: %d %s", r.Status, r.Body)
		}
		p = checkPreview(t, "GET preview", r, slug)
		if p.Status == "failed" && want != "failed" {
			t.Fatalf("preview %s failed: %s", id, r.Body)
		}
		return p.Status == want
	})
	return p
}

// previewGet asks the zone's edge for host's path over HTTPS (the zone's local root signs the
// previews' wildcard). A transport error is status 0 with the error as the body, so a wait
// goes on through it and reports it when it gives up.
func previewGet(t testing.TB, s *harness.Stack, host, path string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.EdgeURL(host, path), nil)
	resp, err := s.EdgeClient().Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func hostOfURL(t testing.TB, u string) string {
	t.Helper()
	host, ok := strings.CutPrefix(u, "https://")
	if !ok || strings.ContainsAny(host, "/:") {
		t.Fatalf("preview url %q is not https://<host>", u)
	}
	return host
}

// waitPreviewServes waits until host's path answers 200 with body want, and checks the
// answer is marked noindex.
func waitPreviewServes(t testing.TB, s *harness.Stack, host, path, want string, within time.Duration) {
	t.Helper()
	var status int
	var body string
	var hdr http.Header
	pollEvery(t, within, 200*time.Millisecond, host+path+" to serve "+want, func() bool {
		status, hdr, body = previewGet(t, s, host, path)
		return status == http.StatusOK && body == want
	})
	if got := hdr.Get("X-Robots-Tag"); got != "noindex" {
		t.Fatalf("%s%s: X-Robots-Tag %q, want noindex", host, path, got)
	}
}

// previewStatic: v1 live; a preview of v2 serves v2 at its host while the slug serves v1 and
// the app's deploys and current deploy are untouched; nestling's one preview per app (a
// second name 403, a malformed one still 400, the same name replaces in place); the TTL
// capped; promote makes the preview's content live.
func previewStatic(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "preview-static")
	slug := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", "v1"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy v1: %d %s", r.Status, r.Body)
	}
	v1 := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, v1, "live")
	waitEdge(t, s, slug, "/", "v1")

	r = createPreview(t, s, a.Token, slug, previewForm{files: []sitePart{{"index.html", "v2"}}, fields: previewFields("pr-1", 0, nil, "")})
	if r.Status != http.StatusCreated {
		t.Fatalf("create preview: %d %s", r.Status, r.Body)
	}
	p := checkPreview(t, "new preview", r, slug)
	if p.Name != "pr-1" || p.Database != "none" || len(p.EnvKeys) != 0 || p.TTLSeconds != nestlingPreviewTTLs || string(p.Error) != "null" {
		t.Fatalf("new preview (nestling's default TTL is its cap, %d s): %s", nestlingPreviewTTLs, r.Body)
	}
	p = waitPreview(t, s, a.Token, slug, p.ID, "ready", 60*time.Second)
	host := hostOfURL(t, p.URL)
	waitPreviewServes(t, s, host, "/", "v2", 30*time.Second)
	if status, body := edgeGet(t, s, slug, "/"); status != http.StatusOK || body != "v1" {
		t.Fatalf("the slug serves %d %q beside the preview, want v1", status, body)
	}
	// The preview is none of the app's deploys and not its current one.
	var deploys []map[string]any
	s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &deploys)
	for _, d := range deploys {
		if d["id"] == p.DeployID {
			t.Fatalf("the preview's revision %s is listed in /deploys", p.DeployID)
		}
	}
	if r := post(s, t, "/api/apps/"+slug+"/deploys/"+p.DeployID+"/rollback", a.Token, nil); r.Status < 400 || r.Status > 499 {
		t.Fatalf("a rollback to the preview's revision: %d %s", r.Status, r.Body)
	}
	if app := s.Get(t, "/api/apps/"+slug, a.Token).Map(t); app["currentDeployId"] != v1 || app["status"] != "running" {
		t.Fatalf("the app after a preview: currentDeployId %v status %v, want %s running", app["currentDeployId"], app["status"], v1)
	}
	if list := listPreviews(t, s, a.Token, slug); len(list) != 1 || list[0]["id"] != p.ID {
		t.Fatalf("previews listed: %v", list)
	}
	// By name as well as by id.
	if r := s.Get(t, previewPath(slug, "pr-1"), a.Token); r.Status != http.StatusOK || r.Map(t)["id"] != p.ID {
		t.Fatalf("GET by name: %d %s", r.Status, r.Body)
	}

	// Nestling's one preview: another name is refused; a malformed one is 400 first.
	site := []sitePart{{"index.html", "other"}}
	e := expectCode(t, "a second preview on nestling", createPreview(t, s, a.Token, slug, previewForm{files: site, fields: previewFields("pr-2", 0, nil, "")}),
		http.StatusForbidden, codePreviewLimit)
	if e.Limit == nil || *e.Limit != 1 || e.Plan != "nestling" {
		t.Fatalf("preview limit body %+v", e)
	}
	for what, f := range map[string]map[string]string{
		"a name out of pattern":              previewFields("PR_2", 0, nil, ""),
		"a TTL under a minute":               previewFields("pr-3", 59, nil, ""),
		"a database neither none nor shared": previewFields("pr-4", 0, nil, "private"),
		"DATABASE_URL as an override":        previewFields("pr-5", 0, map[string]string{"DATABASE_URL": "postgres://x"}, "none"),
		"an override of no env name":         previewFields("pr-6", 0, map[string]string{"1-BAD": "x"}, ""),
	} {
		expectRefusal(t, what, createPreview(t, s, a.Token, slug, previewForm{files: site, fields: f}), http.StatusBadRequest)
	}
	if list := listPreviews(t, s, a.Token, slug); len(list) != 1 {
		t.Fatalf("refusals made previews: %v", list)
	}

	// The same name again replaces it in place: same id and URL, new content.
	r = createPreview(t, s, a.Token, slug, previewForm{files: []sitePart{{"index.html", "v3"}}, fields: previewFields("pr-1", 0, nil, "")})
	if r.Status != http.StatusOK {
		t.Fatalf("replace preview: %d %s", r.Status, r.Body)
	}
	again := checkPreview(t, "replaced preview", r, slug)
	if again.ID != p.ID || again.URL != p.URL || again.DeployID == p.DeployID {
		t.Fatalf("replaced preview %s, was %+v", r.Body, p)
	}
	waitPreview(t, s, a.Token, slug, p.ID, "ready", 60*time.Second)
	waitPreviewServes(t, s, host, "/", "v3", 30*time.Second)

	// A TTL over the plan's cap is capped.
	r = s.Do(t, harness.Request{Method: http.MethodPatch, Path: previewPath(slug, p.ID), Token: a.Token, Body: map[string]any{"ttlSeconds": 30 * 24 * 3600}})
	if r.Status != http.StatusOK {
		t.Fatalf("PATCH ttlSeconds: %d %s", r.Status, r.Body)
	}
	if got := checkPreview(t, "patched preview", r, slug); got.TTLSeconds != nestlingPreviewTTLs {
		t.Fatalf("a 30-day TTL on nestling became %d s, want capped at %d", got.TTLSeconds, nestlingPreviewTTLs)
	}

	// Promote: a normal deploy of the preview's content, live on the slug.
	r = post(s, t, previewPath(slug, p.ID)+"/promote", a.Token, nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("promote: %d %s", r.Status, r.Body)
	}
	promoted := r.Map(t)["id"].(string)
	if promoted == v1 {
		t.Fatalf("promote answered the old deploy: %s", r.Body)
	}
	waitStatus(t, s, a.Token, slug, promoted, "live")
	waitEdge(t, s, slug, "/", "v3")
	pollEvery(t, 10*time.Second, 200*time.Millisecond, "currentDeployId to name the promoted deploy", func() bool {
		return s.Get(t, "/api/apps/"+slug, a.Token).Map(t)["currentDeployId"] == promoted
	})

	// Another account sees nothing of it.
	b := s.NewAccount(t, "preview-stranger")
	expectStatus(t, "another account GETs the preview", s.Get(t, previewPath(slug, p.ID), b.Token), http.StatusNotFound)
	expectStatus(t, "another account promotes it", post(s, t, previewPath(slug, p.ID)+"/promote", b.Token, nil), http.StatusNotFound)
}

// listPreviews is GET .../previews: a JSON list of Previews, as /deploys is.
func listPreviews(t testing.TB, s *harness.Stack, token, slug string) []map[string]any {
	t.Helper()
	r := s.Get(t, "/api/apps/"+slug+"/previews", token)
	expectStatus(t, "list previews", r, http.StatusOK)
	var list []map[string]any
	r.JSON(t, &list)
	return list
}

// previewExpires: a preview of ttlSeconds 60 answers 410 at its host within about 90 s of its
// creation (the sweeper runs every 5 s), is shown expired, and can be neither promoted nor
// given more time.
func previewExpires(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "preview-ttl")
	slug := createApp(t, s, a.Token, "static")
	created := time.Now()
	r := createPreview(t, s, a.Token, slug, previewForm{files: []sitePart{{"index.html", "short-lived"}}, fields: previewFields("", 60, nil, "")})
	if r.Status != http.StatusCreated {
		t.Fatalf("create preview: %d %s", r.Status, r.Body)
	}
	p := checkPreview(t, "60 s preview", r, slug)
	if p.TTLSeconds != 60 || p.Name != p.ID {
		t.Fatalf("a preview without a name is named by its id, ttl 60: %s", r.Body)
	}
	if exp, _ := time.Parse(time.RFC3339, p.ExpiresAt); exp.Before(created.Add(55*time.Second)) || exp.After(created.Add(70*time.Second)) {
		t.Fatalf("expiresAt %s, want about a minute after %s", p.ExpiresAt, created.Format(time.RFC3339))
	}
	waitPreview(t, s, a.Token, slug, p.ID, "ready", 45*time.Second)
	host := hostOfURL(t, p.URL)
	waitPreviewServes(t, s, host, "/", "short-lived", 30*time.Second)

	var status int
	var hdr http.Header
	pollEvery(t, 90*time.Second-time.Since(created), time.Second, "the expired preview to answer 410", func() bool {
		status, hdr, _ = previewGet(t, s, host, "/")
		if status != http.StatusOK && status != http.StatusGone {
			t.Fatalf("the preview answers %d on its way to 410", status)
		}
		return status == http.StatusGone
	})
	t.Logf("410 after %s", time.Since(created).Round(time.Second))
	if got := hdr.Get("X-Robots-Tag"); got != "noindex" {
		t.Fatalf("410: X-Robots-Tag %q, want noindex", got)
	}
	waitPreview(t, s, a.Token, slug, p.ID, "expired", 10*time.Second)
	expectCode(t, "promote an expired preview", post(s, t, previewPath(slug, p.ID)+"/promote", a.Token, nil), http.StatusConflict, codePreviewExpired)
	expectCode(t, "more time for an expired preview", s.Do(t, harness.Request{Method: http.MethodPatch, Path: previewPath(slug, p.ID), Token: a.Token,
		Body: map[string]any{"ttlSeconds": 3600}}), http.StatusConflict, codePreviewExpired)
	if app := s.Get(t, "/api/apps/"+slug, a.Token).Map(t); app["currentDeployId"] != nil {
		t.Fatalf("a preview made a deploy current: %v", app["currentDeployId"])
	}
}

// envApp is a source app that prints, on any path, what of its environment a preview
// changes: TORI_PREVIEW, an override, and digests (never values) of the database variables.
const envApp = `
const http = require('http'), crypto = require('crypto');
const digest = v => v === undefined ? null : crypto.createHash('sha256').update(v).digest('hex').slice(0, 16);
http.createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({
    preview: process.env.TORI_PREVIEW || null,
    feature: process.env.FEATURE_X || null,
    greeting: process.env.GREETING || null,
    db: digest(process.env.DATABASE_URL),
    restore: digest(process.env.DATABASE_RESTORE_URL),
  }));
}).listen(process.env.PORT, '127.0.0.1');
`

type envReport struct {
	Preview  *string `json:"preview"`
	Feature  *string `json:"feature"`
	Greeting *string `json:"greeting"`
	DB       *string `json:"db"`
	Restore  *string `json:"restore"`
}

func (e envReport) String() string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("preview=%s feature=%s greeting=%s db=%s restore=%s", s(e.Preview), s(e.Feature), s(e.Greeting), s(e.DB), s(e.Restore))
}

// previewServiceEnv: a service app with a database; its preview (database none, one override)
// runs without DATABASE_URL, with TORI_PREVIEW=1, the override and the app's own variables;
// replaced with database shared it has the app's DATABASE_URL; deleted, its host answers 410.
func previewServiceEnv(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "preview-svc")
	slug := createApp(t, s, a.Token, "service")
	expectStatus(t, "env", s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token,
		Body: map[string]string{"key": "GREETING", "value": "hello"}}), http.StatusCreated)
	expectStatus(t, "create the database", post(s, t, "/api/apps/"+slug+"/database", a.Token, nil), http.StatusAccepted)
	pollEvery(t, 60*time.Second, 250*time.Millisecond, "DATABASE_URL in the app's environment", func() bool {
		_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
		return ok
	})
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	src := sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": envApp})
	r := deploySource(t, s, a.Token, slug, src, "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	report := func(get func() (int, string)) (envReport, bool) {
		status, body := get()
		var e envReport
		if status != http.StatusOK || json.Unmarshal([]byte(body), &e) != nil {
			return e, false
		}
		return e, true
	}
	var live envReport
	pollEvery(t, 30*time.Second, 200*time.Millisecond, "the live app to answer", func() bool {
		var ok bool
		live, ok = report(func() (int, string) { return edgeGet(t, s, slug, "/env") })
		return ok
	})
	if live.Preview != nil || live.Feature != nil || live.DB == nil || live.Greeting == nil || *live.Greeting != "hello" {
		t.Fatalf("the live app's environment: %v", live)
	}

	const featureValue = "feature-on-7c1d"
	r = createPreview(t, s, a.Token, slug, previewForm{source: src, fields: previewFields("env", 0, map[string]string{"FEATURE_X": featureValue}, "none")})
	if r.Status != http.StatusCreated {
		t.Fatalf("create preview: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), featureValue) {
		t.Fatalf("the Preview shows an override's value: %s", r.Body)
	}
	p := checkPreview(t, "service preview", r, slug)
	if p.Database != "none" || !slices.Equal(p.EnvKeys, []string{"FEATURE_X"}) {
		t.Fatalf("service preview: %s", r.Body)
	}
	waitPreview(t, s, a.Token, slug, p.ID, "ready", 90*time.Second)
	host := hostOfURL(t, p.URL)
	var got envReport
	var hdr http.Header
	// A preview's instance naps and wakes like a minScale-0 app's: the first answer may wait.
	pollEvery(t, 60*time.Second, 250*time.Millisecond, "the preview to answer", func() bool {
		var ok bool
		got, ok = report(func() (int, string) {
			status, h, body := previewGet(t, s, host, "/env")
			hdr = h
			return status, body
		})
		return ok
	})
	if hdr.Get("X-Robots-Tag") != "noindex" {
		t.Fatalf("service preview: X-Robots-Tag %q", hdr.Get("X-Robots-Tag"))
	}
	if got.Preview == nil || *got.Preview != "1" || got.Feature == nil || *got.Feature != featureValue || got.DB != nil || got.Restore != nil ||
		got.Greeting == nil || *got.Greeting != "hello" {
		t.Fatalf("the preview's environment (database none): %v", got)
	}
	// The live app is as it was.
	if again, ok := report(func() (int, string) { return edgeGet(t, s, slug, "/env") }); !ok || again.String() != live.String() {
		t.Fatalf("the live app after a preview: %v, was %v", again, live)
	}

	// The same name with database shared: the app's own DATABASE_URL, no override any more.
	r = createPreview(t, s, a.Token, slug, previewForm{source: src, fields: previewFields("env", 0, nil, "shared")})
	if r.Status != http.StatusOK {
		t.Fatalf("replace preview: %d %s", r.Status, r.Body)
	}
	shared := checkPreview(t, "shared preview", r, slug)
	if shared.ID != p.ID || shared.Database != "shared" || len(shared.EnvKeys) != 0 {
		t.Fatalf("replaced preview: %s", r.Body)
	}
	waitPreview(t, s, a.Token, slug, p.ID, "ready", 90*time.Second)
	pollEvery(t, 60*time.Second, 250*time.Millisecond, "the shared preview's environment", func() bool {
		got, _ = report(func() (int, string) {
			status, _, body := previewGet(t, s, host, "/env")
			return status, body
		})
		return got.DB != nil
	})
	if got.Preview == nil || *got.Preview != "1" || *got.DB != *live.DB || got.Feature != nil {
		t.Fatalf("the preview's environment (database shared): %v, live %v", got, live)
	}

	// Deleted: 204, shown deleted, and its host answers 410.
	expectStatus(t, "delete the preview", s.Do(t, harness.Request{Method: http.MethodDelete, Path: previewPath(slug, p.ID), Token: a.Token}), http.StatusNoContent)
	pollEvery(t, 10*time.Second, 200*time.Millisecond, "the deleted preview to answer 410", func() bool {
		status, _, _ := previewGet(t, s, host, "/env")
		return status == http.StatusGone
	})
	if r := s.Get(t, previewPath(slug, p.ID), a.Token); r.Status != http.StatusOK || checkPreview(t, "deleted preview", r, slug).Status != "deleted" {
		t.Fatalf("GET a deleted preview: %d %s", r.Status, r.Body)
	}
	expectCode(t, "promote a deleted preview", post(s, t, previewPath(slug, p.ID)+"/promote", a.Token, nil), http.StatusConflict, codePreviewExpired)
}

// previewViewer: in a team, a viewer lists previews but may not create one.
func previewViewer(t *testing.T, s *harness.Stack) {
	owner := s.NewAccount(t, "preview-owner")
	team := createTeam(t, s, owner.Token, "Previewers "+harness.Hex(3))
	slug := "e2e-pv-" + harness.Hex(3)
	createTeamApp(t, s, owner.Token, team.Slug, slug, "static")
	viewer := joinTeam(t, s, owner.Token, team.Slug, "viewer", "preview-viewer")
	if list := listPreviews(t, s, viewer.Token, slug); len(list) != 0 {
		t.Fatalf("previews of a new app: %v", list)
	}
	e := expectCode(t, "a viewer creates a preview", createPreview(t, s, viewer.Token, slug,
		previewForm{files: []sitePart{{"index.html", "viewer"}}, fields: previewFields("viewer", 0, nil, "")}), http.StatusForbidden, access.CodeInsufficientRole)
	if e.RequiredRole != access.Developer.String() {
		t.Fatalf("refusal body %+v, want requiredRole developer", e)
	}
	if list := listPreviews(t, s, owner.Token, slug); len(list) != 0 {
		t.Fatalf("a viewer's refused preview exists: %v", list)
	}
}

// previewUnknownHosts: under PREVIEWS_DOMAIN, an id no preview has is 404, and so is a real
// preview's id behind another app's slug; the app's deletion takes its preview (410).
func previewUnknownHosts(t *testing.T, s *harness.Stack) {
	a := s.NewAccount(t, "preview-hosts")
	slug := createApp(t, s, a.Token, "static")
	r := createPreview(t, s, a.Token, slug, previewForm{files: []sitePart{{"index.html", "hosts"}}, fields: previewFields("hosts", 0, nil, "")})
	if r.Status != http.StatusCreated {
		t.Fatalf("create preview: %d %s", r.Status, r.Body)
	}
	p := checkPreview(t, "preview", r, slug)
	waitPreview(t, s, a.Token, slug, p.ID, "ready", 60*time.Second)
	waitPreviewServes(t, s, hostOfURL(t, p.URL), "/", "hosts", 30*time.Second)

	unknown := names.NewPreviewID()
	for unknown == p.ID {
		unknown = names.NewPreviewID()
	}
	for what, host := range map[string]string{
		"an unknown id":              names.PreviewHost(slug, unknown, previewsDomain),
		"the id behind a wrong slug": names.PreviewHost("not-"+slug, p.ID, previewsDomain),
	} {
		if status, _, body := previewGet(t, s, host, "/"); status != http.StatusNotFound {
			t.Fatalf("%s (%s): %d %q, want 404", what, host, status, body)
		}
	}

	expectStatus(t, "delete the app", s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug, Token: a.Token}), http.StatusOK)
	pollEvery(t, 10*time.Second, 200*time.Millisecond, "a deleted app's preview to answer 410", func() bool {
		status, _, _ := previewGet(t, s, hostOfURL(t, p.URL), "/")
		return status == http.StatusGone
	})
}
