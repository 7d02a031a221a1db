package httpapi_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/deploys/internal/usecase"
)

func TestStaticDeployStreamsFilesIntoOneArtifact(t *testing.T) {
	e := newEnv(t, testPlan)
	appID := e.addApp(e.account, "site", "static")
	status, body, _ := e.upload(e.account, "site", file("index.html", "<h1>hi</h1>"), file("assets/app.js", "console.log(1)"))
	if status != http.StatusCreated {
		t.Fatalf("status %d %v", status, body)
	}
	for k, want := range map[string]any{"appId": appID, "kind": "static", "status": "building", "image": nil, "release": nil, "rollbackOf": nil, "error": nil, "finishedAt": nil} {
		if body[k] != want {
			t.Errorf("%s = %v, want %v", k, body[k], want)
		}
	}
	if _, err := uuid.Parse(body["id"].(string)); err != nil {
		t.Errorf("id %v", body["id"])
	}
	files := e.files()
	if len(files) != 1 {
		t.Fatalf("objects %v", files)
	}
	// The artifact keeps the folders Go's Part.FileName would have dropped.
	f, _ := os.Open(files[0])
	defer f.Close()
	tr := tar.NewReader(f)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got[h.Name] = string(b)
	}
	if got["index.html"] != "<h1>hi</h1>" || got["assets/app.js"] != "console.log(1)" || len(got) != 2 {
		t.Fatalf("artifact holds %v", got)
	}
	keys := e.outboxKeys()
	if !contains(keys, "deploys.deploy.created") || !contains(keys, "zone.local.deploy") {
		t.Fatalf("published %v", keys)
	}
}

// Every refusal of a create leaves no row, no object and no temporary file behind.
func TestCreateRefusalsLeaveNothingBehind(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	e.addApp(e.account, "svc", "service")
	other := uuid.NewString()
	e.addApp(other, "theirs", "static")
	big := strings.Repeat("x", int(testPlan.UploadBytes)+1)

	for _, tc := range []struct {
		name   string
		send   func() (int, map[string]any, http.Header)
		status int
		code   string
	}{
		{"dotdot", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", file("index.html", "ok"), file("../escape.html", "x"))
		}, 400, "invalid_path"},
		{"leading slash", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", file("/etc/passwd", "x"))
		}, 400, "invalid_path"},
		{"backslash", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", file(`assets\app.js`, "x"))
		}, 400, "invalid_path"},
		{"nul", func() (int, map[string]any, http.Header) { return e.upload(e.account, "site", file("a\x00b", "x")) }, 400, "invalid_path"},
		{"no filename", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", part{`form-data; name="files"`, "x"})
		}, 400, "invalid_path"},
		{"no files", func() (int, map[string]any, http.Header) { return e.upload(e.account, "site") }, 400, "no_files"},
		{"json to a static app", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/site/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
		}, 400, "kind_mismatch"},
		{"source to a static app", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", part{`form-data; name="source"; filename="app.tar.gz"`, "x"})
		}, 400, "kind_mismatch"},
		{"files to a service app", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "svc", file("index.html", "x"))
		}, 400, "kind_mismatch"},
		{"source without source part", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "svc", part{`form-data; name="release"`, "bin/migrate"})
		}, 400, "invalid_body"},
		{"clearCache neither true nor false", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "svc", part{`form-data; name="source"; filename="app.tar.gz"`, "x"}, part{`form-data; name="clearCache"`, "yes"})
		}, 400, "invalid_body"},
		{"clearCache on a static upload", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", file("index.html", "ok"), part{`form-data; name="clearCache"`, "true"})
		}, 400, "kind_mismatch"},
		{"bad image", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"nginx:latest"}`)
		}, 400, "invalid_image"},
		{"loopback registry", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"127.0.0.1:5000/a/b@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"localhost registry", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"localhost:5000/a/b@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"link-local registry", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"169.254.169.254/a/b@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"private registry", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"10.1.2.3/a/b@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"registry named publicly, resolving to loopback", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"127.0.0.1.nip.io:8101/x@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"registry named publicly, resolving to link-local", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"metadata.example.com/a/b@sha256:`+digest()+`"}`)
		}, 400, "invalid_image"},
		{"missing image", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"release":"x"}`)
		}, 400, "invalid_image"},
		{"forceRestart without image", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"forceRestart":true}`)
		}, 400, "force_restart_requires_image"},
		{"bad release", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`","release":42}`)
		}, 400, "invalid_release"},
		{"not json", func() (int, map[string]any, http.Header) {
			return e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":`)
		}, 400, "invalid_body"},
		{"too large by length", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "site", file("big.bin", big))
		}, 413, "upload_too_large"},
		{"too large while streaming", func() (int, map[string]any, http.Header) {
			ct, body := multipartBody(file("index.html", "ok"), file("big.bin", big))
			// No Content-Length: the body arrives chunked and only counting catches it.
			return e.request(e.account, "POST", "/api/apps/site/deploys", ct, io.MultiReader(bytes.NewReader(body)), -1)
		}, 413, "upload_too_large"},
		{"another account's app", func() (int, map[string]any, http.Header) {
			return e.upload(e.account, "theirs", file("index.html", "x"))
		}, 404, ""},
		{"unknown app", func() (int, map[string]any, http.Header) { return e.upload(e.account, "nope", file("index.html", "x")) }, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := tc.send()
			if status != tc.status {
				t.Fatalf("status %d %v, want %d", status, body, tc.status)
			}
			if tc.code != "" && (body["code"] != tc.code || body["error"] != tc.code) {
				t.Fatalf("body %v, want code %s", body, tc.code)
			}
			if tc.status == 404 && body["error"] != "not found" {
				t.Fatalf("body %v", body)
			}
			if tc.status == 413 && (body["limit"] != float64(testPlan.UploadBytes) || body["plan"] != "songbird") {
				t.Fatalf("413 body %v", body)
			}
			e.assertNothingBehind(0)
		})
	}
	if tmp, _ := os.ReadDir(filepath.Join(e.objDir, ".tmp")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

func TestConcurrentDeployLimit(t *testing.T) {
	plan := testPlan
	plan.ConcurrentDeploys = 1
	e := newEnv(t, plan)
	e.addApp(e.account, "site", "static")
	e.addApp(e.account, "site2", "static")
	if status, body, _ := e.upload(e.account, "site", file("index.html", "1")); status != 201 {
		t.Fatalf("first: %d %v", status, body)
	}
	// The limit counts the account's deploys under way across its apps.
	status, body, h := e.upload(e.account, "site2", file("index.html", "2"))
	if status != http.StatusTooManyRequests || body["code"] != "deploy_limit_reached" || body["limit"] != float64(1) {
		t.Fatalf("second: %d %v", status, body)
	}
	if body["retryAfter"] == nil || body["retryAfterSeconds"] == nil || h.Get("Retry-After") == "" {
		t.Fatalf("429 without retry hints: %v %v", body, h)
	}
	e.assertNothingBehind(1)
	// Image deploys are held by the same limit.
	e.addApp(e.account, "svc", "service")
	status, _, _ = e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`)
	if status != http.StatusTooManyRequests {
		t.Fatalf("image deploy over the limit: %d", status)
	}
	e.assertNothingBehind(1)
}

func TestDeletedAppIsNotFound(t *testing.T) {
	e := newEnv(t, testPlan)
	appID := e.addApp(e.account, "site", "static")
	status, body, _ := e.upload(e.account, "site", file("index.html", "1"))
	if status != 201 {
		t.Fatal(status)
	}
	id := body["id"].(string)
	err := e.svc.Store().InTx(context.Background(), func(tx serviceTx) error { return e.svc.OnAppDeleted(context.Background(), tx, appID) })
	if err != nil {
		t.Fatal(err)
	}
	if e.status(id) != "cancelled" {
		t.Fatalf("open deploy of a deleted app is %s", e.status(id))
	}
	for _, path := range []string{"/api/apps/site/deploys", "/api/apps/site/deploys/" + id} {
		if status, _, _ := e.request(e.account, "GET", path, "", nil, 0); status != 404 {
			t.Errorf("GET %s: %d", path, status)
		}
	}
	if status, _, _ := e.upload(e.account, "site", file("index.html", "1")); status != 404 {
		t.Errorf("deploy to deleted app: %d", status)
	}
	// The background cleanup removes artifacts and rows, then confirms.
	if n, err := e.svc.CleanDeletedApps(context.Background()); err != nil || n != 1 {
		t.Fatalf("cleanup: %d %v", n, err)
	}
	e.assertNothingBehind(0)
	if !contains(e.outboxKeys(), "deploys.app.cleaned") || !contains(e.outboxKeys(), "zone.local.discard") {
		t.Fatalf("published %v", e.outboxKeys())
	}
	if n, _ := e.svc.CleanDeletedApps(context.Background()); n != 0 {
		t.Fatal("cleanup ran twice")
	}
}

func TestUnsignedRequestIsUnauthorized(t *testing.T) {
	e := newEnv(t, testPlan)
	req, _ := http.NewRequest("GET", "/api/apps/site/deploys", nil)
	resp, err := e.app.Test(req, -1)
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("%v %v", resp.StatusCode, err)
	}
}

// Another account's app is 404 whatever the request says: neither a bad image nor an
// unusable Content-Type may be judged before the app is the caller's.
func TestForeignAppIsNotFoundBeforeTheBodyIsJudged(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	other := uuid.NewString()
	if status, _, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"not-an-image"}`); status != 400 {
		t.Fatalf("own app, bad image: %d, want 400", status)
	}
	if status, _, _ := e.postJSON(other, "/api/apps/svc/deploys", `{"image":"not-an-image"}`); status != 404 {
		t.Fatalf("foreign app, bad image: %d, want 404", status)
	}
	if status, _, _ := e.request(other, "POST", "/api/apps/svc/deploys", "multipart/form-data", strings.NewReader("x"), 1); status != 404 {
		t.Fatalf("foreign app, multipart without boundary: %d, want 404", status)
	}
	e.assertNothingBehind(0)
}

// With no copy of the plan and billing not answering, the limits are unknown: a create
// answers 503 service_unavailable before reading the upload, and leaves nothing behind. Once
// billing answers, the same request goes through.
func TestPlanUnavailableIsServiceUnavailable(t *testing.T) {
	down := &switchablePlans{err: fmt.Errorf("%w: no answer", billingbus.ErrPlanUnavailable)}
	e := newEnvWithPlans(t, down)
	e.addApp(e.account, "site", "static")
	e.addApp(e.account, "svc", "service")
	img := `{"image":"ghcr.io/a/b@sha256:` + digest() + `"}`
	for name, send := range map[string]func() (int, map[string]any, http.Header){
		"upload": func() (int, map[string]any, http.Header) { return e.upload(e.account, "site", file("index.html", "1")) },
		"image":  func() (int, map[string]any, http.Header) { return e.postJSON(e.account, "/api/apps/svc/deploys", img) },
	} {
		status, body, _ := send()
		if status != http.StatusServiceUnavailable || body["error"] != "service_unavailable" || body["code"] != "service_unavailable" {
			t.Fatalf("%s with billing down: %d %v", name, status, body)
		}
		e.assertNothingBehind(0)
	}
	down.set(testPlan, nil)
	if status, body, _ := e.upload(e.account, "site", file("index.html", "1")); status != http.StatusCreated {
		t.Fatalf("upload once billing answers: %d %v", status, body)
	}
}

// switchablePlans is billing that can come back.
type switchablePlans struct {
	mu  sync.Mutex
	p   usecase.Plan
	err error
}

func (s *switchablePlans) set(p usecase.Plan, err error) {
	s.mu.Lock()
	s.p, s.err = p, err
	s.mu.Unlock()
}

func (s *switchablePlans) AccountPlan(context.Context, string) (usecase.Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p, s.err
}

// A registry is judged by the addresses its name resolves to, not by how the name reads:
// 127.0.0.1.nip.io is refused at deploy time, saying why, and nothing is recorded.
func TestImageRegistryResolvingToLoopbackIsRefused(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"127.0.0.1.nip.io:8101/x@sha256:`+digest()+`"}`)
	msg, _ := body["message"].(string)
	if status != 400 || body["code"] != "invalid_image" || !strings.Contains(msg, "registry 127.0.0.1.nip.io:8101 resolves to a loopback address") {
		t.Fatalf("status %d %v", status, body)
	}
	e.assertNothingBehind(0)
	// A public answer passes.
	if status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"ghcr.io/a/b@sha256:`+digest()+`"}`); status != 201 {
		t.Fatalf("public registry: %d %v", status, body)
	}
}
