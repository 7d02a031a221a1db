package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/cli/internal/api"
)

func TestParsePreviewFlags(t *testing.T) {
	cases := []struct {
		f    PreviewFlags
		want *api.PreviewOptions
		err  string
	}{
		{PreviewFlags{}, nil, ""},
		{PreviewFlags{Name: "pr-12"}, &api.PreviewOptions{Name: "pr-12"}, ""},
		{PreviewFlags{Name: "pr-12", TTL: "48h", Env: []string{"FEATURE_X=on", "A=1=2", "FEATURE_X=off"}, Database: "none"},
			&api.PreviewOptions{Name: "pr-12", TTLSeconds: 172800, Env: map[string]string{"FEATURE_X": "off", "A": "1=2"}, Database: "none"}, ""},
		{PreviewFlags{Name: "x", TTL: "2d", Database: "shared", Env: []string{"DATABASE_URL=postgres://x"}},
			&api.PreviewOptions{Name: "x", TTLSeconds: 172800, Database: "shared", Env: map[string]string{"DATABASE_URL": "postgres://x"}}, ""},
		{PreviewFlags{TTL: "48h"}, nil, "go with --preview NAME"},
		{PreviewFlags{Env: []string{"A=1"}}, nil, "go with --preview NAME"},
		{PreviewFlags{Name: "PR_12"}, nil, `--preview "PR_12"`},
		{PreviewFlags{Name: strings.Repeat("a", 21)}, nil, "at most 20"},
		{PreviewFlags{Name: "a", TTL: "30s"}, nil, "at least 1m"},
		{PreviewFlags{Name: "a", TTL: "soon"}, nil, `--ttl "soon"`},
		{PreviewFlags{Name: "a", Database: "prod"}, nil, `--database "prod"`},
		{PreviewFlags{Name: "a", Env: []string{"lower=1"}}, nil, "is not a variable name"},
		{PreviewFlags{Name: "a", Env: []string{"NOVALUE"}}, nil, "want KEY=VALUE"},
		{PreviewFlags{Name: "a", Env: []string{"DATABASE_URL=x"}}, nil, "without --database shared"},
	}
	for _, tc := range cases {
		got, err := ParsePreviewFlags(tc.f)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: err %v, want %q", tc.f, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: %+v %v, want %+v", tc.f, got, err, tc.want)
		}
	}
}

const previewJSON = `{"id":"a1b2c3","name":"pr-12","app":"site","url":"https://site-a1b2c3.preview.apps.localhost","status":%q,` +
	`"deployId":"pd1","database":"none","envKeys":["FEATURE_X"],"ttlSeconds":%d,"expiresAt":"2026-12-01T10:00:00Z",` +
	`"createdAt":"2026-11-29T10:00:00Z","updatedAt":%q,"error":%s}`

// previewAPI answers the preview routes of apps "site" (static) and "svc" (service) as the
// deploys service documents them, and records each request; a new preview is deploying for
// its first two reads, then ready (or failed for svc).
type previewAPI struct {
	mu     sync.Mutex
	calls  []string
	reads  int
	parts  []string // the last multipart preview's parts, name=value (files by filename)
	update string
}

func (p *previewAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var body []byte
	if ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		p.parts = nil
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(part)
			if part.FileName() != "" {
				p.parts = append(p.parts, part.FormName()+":"+part.FileName())
			} else {
				p.parts = append(p.parts, part.FormName()+"="+string(b))
			}
		}
		body = []byte("(multipart)")
	} else {
		body, _ = io.ReadAll(r.Body)
	}
	call := strings.TrimSpace(r.Method + " " + r.URL.RequestURI() + " " + string(body))
	if r.URL.Path != "/api/apps/site/logs/stream" && r.URL.Path != "/api/apps/svc/logs/stream" {
		p.calls = append(p.calls, call)
	}
	w.Header().Set("Content-Type", "application/json")
	one := func(status string, ttl int, errJSON string) string {
		return fmt.Sprintf(previewJSON, status, ttl, p.update, errJSON)
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/apps/site":
		fmt.Fprint(w, `{"slug":"site","kind":"static","status":"running","url":"https://site.apps.localhost"}`)
	case "GET /api/apps/svc":
		fmt.Fprint(w, `{"slug":"svc","kind":"service","status":"running","url":"https://svc.apps.localhost"}`)
	case "GET /api/apps/site/logs/stream", "GET /api/apps/svc/logs/stream":
		// The preview's build line, one of the live app's, then quiet until the client leaves.
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Header.Get("Last-Event-ID") == "" {
			fmt.Fprintf(w, "id: c1\ndata: {\"id\":\"1\",\"timestamp\":%q,\"stream\":\"build\",\"deployId\":\"pd1\",\"message\":\"unpacked 2 files\"}\n\n", p.update)
			fmt.Fprintf(w, "id: c2\ndata: {\"id\":\"2\",\"timestamp\":%q,\"stream\":\"build\",\"deployId\":\"live1\",\"message\":\"not the preview's\"}\n\n", p.update)
		}
		w.(http.Flusher).Flush()
		p.mu.Unlock()
		<-r.Context().Done()
		p.mu.Lock()
	case "POST /api/apps/site/previews", "POST /api/apps/svc/previews":
		p.reads = 0
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, one("deploying", 172800, "null"))
	case "POST /api/apps/full/previews":
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error":"preview_limit_reached","code":"preview_limit_reached","limit":1,"plan":"nestling","message":"the nestling plan keeps at most 1 preview per app"}`)
	case "GET /api/apps/site/previews/a1b2c3":
		if p.reads++; p.reads <= 2 {
			fmt.Fprint(w, one("deploying", 172800, "null"))
			return
		}
		fmt.Fprint(w, one("ready", 172800, "null"))
	case "GET /api/apps/svc/previews/a1b2c3":
		if p.reads++; p.reads <= 1 {
			fmt.Fprint(w, one("deploying", 172800, "null"))
			return
		}
		fmt.Fprint(w, one("failed", 172800, `{"code":"build_failed","message":"npm run build exited 1"}`))
	case "GET /api/apps/site/previews":
		fmt.Fprint(w, `[`+one("ready", 172800, "null")+`,`+strings.NewReplacer(`"a1b2c3"`, `"zz9yy8"`, `"pr-12"`, `"old"`, "a1b2c3.", "zz9yy8.").Replace(
			one("expired", 3600, "null"))+`]`)
	case "PATCH /api/apps/site/previews/pr-12":
		fmt.Fprint(w, one("ready", 86400, "null"))
	case "PATCH /api/apps/site/previews/long":
		fmt.Fprint(w, strings.Replace(one("ready", 604800, "null"), `"pr-12"`, `"long"`, 1))
	case "PATCH /api/apps/site/previews/old":
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":"preview_expired","code":"preview_expired","message":"preview old has expired; deploy it again"}`)
	case "DELETE /api/apps/site/previews/pr-12":
		w.WriteHeader(http.StatusNoContent)
	case "POST /api/apps/site/previews/pr-12/promote":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"d77","appId":"a1","kind":"static","status":"building","createdAt":"2026-11-29T10:05:00Z"}`)
	case "POST /api/apps/site/previews/busy/promote":
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":"preview_not_ready","code":"preview_not_ready","message":"preview busy is still deploying"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"not found"}`)
	}
}

func (p *previewAPI) take() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, parts := p.calls, p.parts
	p.calls, p.parts = nil, nil
	return c, parts
}

// runPolling is run with a short poll interval, as a watch's tests need.
func runPolling(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TORI_API_URL": url, "TORI_TOKEN": "svc_test"}
	code := Main(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		Timeout: 2 * time.Second, Poll: 20 * time.Millisecond}, args)
	return code, out.String(), errb.String()
}

// deploy --preview sends the deploy's payload to the previews route with the options, follows
// the preview's own build lines until it is ready and prints its URL; a failure exits 1 in
// the zone's words.
func TestDeployPreview(t *testing.T) {
	fake := &previewAPI{update: time.Now().UTC().Format(time.RFC3339Nano)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>new</h1>"), 0o644)
	os.WriteFile(filepath.Join(dir, "app.js"), []byte("1"), 0o644)

	code, out, stderr := runPolling(t, srv.URL, "deploy", dir, "-a", "site", "--preview", "pr-12", "--ttl", "48h", "--env", "FEATURE_X=on")
	calls, parts := fake.take()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if calls[0] != "GET /api/apps/site" || calls[1] != "POST /api/apps/site/previews (multipart)" {
		t.Fatalf("calls %q", calls)
	}
	for _, c := range calls[2:] {
		if c != "GET /api/apps/site/previews/a1b2c3" {
			t.Fatalf("after the upload, %q: want only the preview's reads", c)
		}
	}
	want := []string{"files:app.js", "files:index.html", "name=pr-12", "ttlSeconds=172800", `env={"FEATURE_X":"on"}`}
	if !reflect.DeepEqual(parts, want) {
		t.Fatalf("parts %q, want %q", parts, want)
	}
	// The preview's build line (not the live app's), then its URL.
	if out != "build   unpacked 2 files\nPreview: https://site-a1b2c3.preview.apps.localhost (until 2026-12-01T10:00:00Z)\n" {
		t.Fatalf("stdout %q", out)
	}
	if !strings.Contains(stderr, "Preview pr-12 deploying") || !strings.Contains(stderr, "Preview pr-12 ready") {
		t.Fatalf("stderr %q", stderr)
	}

	// An image preview is the image deploy's JSON with the options; --detach returns at once.
	img := "ghcr.io/acme/web@sha256:" + strings.Repeat("a", 64)
	code, out, stderr = run(t, srv.URL, "", "deploy", "--image", img, "--process", "web=./server", "-a", "svc", "--preview", "pr-12", "--database", "shared", "--detach")
	calls, _ = fake.take()
	wantCall := `POST /api/apps/svc/previews {"image":"` + img + `","processes":{"web":"./server"},"name":"pr-12","database":"shared"}`
	if code != 0 || !reflect.DeepEqual(calls, []string{wantCall}) {
		t.Fatalf("image: exit %d calls %q stderr %q; want %q", code, calls, stderr, wantCall)
	}
	if !strings.Contains(out, "Preview pr-12 accepted (deploying): https://site-a1b2c3.preview.apps.localhost") {
		t.Fatalf("detached: %q", out)
	}

	// A failed preview: exit 1 with the zone's reason.
	code, _, stderr = runPolling(t, srv.URL, "deploy", "--image", img, "-a", "svc", "--preview", "pr-12")
	if code != 1 || !strings.Contains(stderr, "Error: preview pr-12 failed: npm run build exited 1") {
		t.Fatalf("failed: exit %d stderr %q", code, stderr)
	}
	fake.take()

	// Over the plan: the API's words, exit 1.
	code, _, stderr = run(t, srv.URL, "", "deploy", "--image", img, "-a", "full", "--preview", "pr-13")
	if code != 1 || !strings.Contains(stderr, `app "full": preview_limit_reached: the nestling plan keeps at most 1 preview per app`) ||
		!strings.Contains(stderr, `"tori plans" shows each plan's limits`) {
		t.Fatalf("over the plan: exit %d stderr %q", code, stderr)
	}

	// --force-restart is an image deploy's; a preview is a new revision each time.
	fake.take()
	code, _, stderr = run(t, srv.URL, "", "deploy", "--image", img, "-a", "svc", "--preview", "pr-12", "--force-restart")
	if calls, _ := fake.take(); code != 2 || len(calls) != 0 || !strings.Contains(stderr, "--force-restart does not go with --preview") {
		t.Fatalf("--force-restart: exit %d calls %q stderr %q", code, calls, stderr)
	}

	// Preview flags without --preview are a usage error; nothing is sent.
	fake.take()
	code, _, stderr = run(t, srv.URL, "", "deploy", dir, "-a", "site", "--ttl", "48h")
	if calls, _ := fake.take(); code != 2 || len(calls) != 0 || !strings.Contains(stderr, "--ttl, --env and --database go with --preview NAME") {
		t.Fatalf("--ttl alone: exit %d calls %q stderr %q", code, calls, stderr)
	}
}

func TestPreviewsCommands(t *testing.T) {
	fake := &previewAPI{update: "2026-11-29T10:00:00Z"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	cases := []struct {
		name  string
		args  []string
		code  int
		calls []string
		out   []string
		err   string
	}{
		{"list", []string{"previews", "-a", "site"}, 0, []string{"GET /api/apps/site/previews"}, []string{
			"NAME ID STATUS URL EXPIRES",
			"pr-12 a1b2c3 ready https://site-a1b2c3.preview.apps.localhost 2026-12-01T10:00:00Z",
			"old zz9yy8 expired https://site-zz9yy8.preview.apps.localhost 2026-12-01T10:00:00Z",
		}, ""},
		{"ls", []string{"previews", "ls", "-a", "site"}, 0, []string{"GET /api/apps/site/previews"}, nil, ""},
		{"ttl", []string{"previews", "ttl", "pr-12", "24h", "-a", "site"}, 0, []string{`PATCH /api/apps/site/previews/pr-12 {"ttlSeconds":86400}`},
			[]string{"Preview pr-12 now ends at 2026-12-01T10:00:00Z."}, ""},
		{"ttl capped", []string{"previews", "ttl", "long", "30d", "-a", "site"}, 0, []string{`PATCH /api/apps/site/previews/long {"ttlSeconds":2592000}`},
			[]string{"Preview long now ends at 2026-12-01T10:00:00Z (capped by the plan at 168h0m0s)."}, ""},
		{"ttl of an expired one", []string{"previews", "ttl", "old", "1h", "-a", "site"}, 1, []string{`PATCH /api/apps/site/previews/old {"ttlSeconds":3600}`},
			[]string{""}, "preview_expired: preview old has expired; deploy it again"},
		{"ttl not a duration", []string{"previews", "ttl", "pr-12", "tomorrow", "-a", "site"}, 2, nil, []string{""}, `--ttl "tomorrow"`},
		{"promote", []string{"previews", "promote", "pr-12", "-a", "site"}, 0, []string{"POST /api/apps/site/previews/pr-12/promote"},
			[]string{"Promoted preview pr-12: deploy d77 (building). Follow it with `tori deploys show d77`."}, ""},
		{"promote not ready", []string{"previews", "promote", "busy", "-a", "site"}, 1, []string{"POST /api/apps/site/previews/busy/promote"},
			[]string{""}, "preview_not_ready: preview busy is still deploying"},
		{"rm", []string{"previews", "rm", "pr-12", "--yes", "-a", "site"}, 0, []string{"DELETE /api/apps/site/previews/pr-12"}, []string{"Removed preview pr-12."}, ""},
		{"rm asks first", []string{"previews", "rm", "pr-12", "-a", "site"}, 1, nil, []string{""}, "pass --yes"},
		{"rm of an unknown one", []string{"previews", "rm", "nope", "--yes", "-a", "site"}, 1, []string{"DELETE /api/apps/site/previews/nope"}, []string{""},
			`preview "nope" of app "site" not found`},
		{"an unknown subcommand", []string{"previews", "bogus", "-a", "site"}, 2, nil, []string{""}, `unknown command "bogus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.take()
			code, out, stderr := run(t, srv.URL, "", tc.args...)
			calls, _ := fake.take()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			if tc.err != "" && !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q in it", stderr, tc.err)
			}
			if tc.out != nil && !reflect.DeepEqual(lines(out), tc.out) {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(tc.out, "\n"))
			}
			if !reflect.DeepEqual(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}
