package e2e

import (
	"net/http"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// decisions.md: an app's framework is static until a deploy shows otherwise (a package.json
// depending on vite, next, astro or @sveltejs/kit). Through the gateway, each static upload
// that goes live gives the app its framework: vite, then next, then static for a site
// without a package.json; a rollback brings its target's back. Static deploys stay uploads
// of built files: a source tarball to a static app is kind_mismatch, package.json or not.
func TestAppFrameworkFollowsItsLiveDeploy(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "framework")
	slug := createApp(t, s, a.Token, "static")
	if got := s.Get(t, "/api/apps/"+slug, a.Token).Map(t)["framework"]; got != "static" {
		t.Fatalf("new app: framework %v", got)
	}

	deploy := func(body string, files ...sitePart) string {
		t.Helper()
		r := deployFiles(t, s, a.Token, slug, append([]sitePart{{"index.html", body}}, files...)...)
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		id := r.Map(t)["id"].(string)
		waitStatus(t, s, a.Token, slug, id, "live")
		waitEdge(t, s, slug, "/", body)
		return id
	}
	expect := func(want, deployID string) {
		t.Helper()
		var app map[string]any
		harness.Eventually(t, 10*time.Second, "the app's framework to be "+want, func() bool {
			app = s.Get(t, "/api/apps/"+slug, a.Token).Map(t)
			return app["currentDeployId"] == deployID
		})
		if app["framework"] != want {
			t.Fatalf("app with deploy %s live: framework %v, want %s", deployID, app["framework"], want)
		}
	}

	vite := deploy("vite site", sitePart{"package.json", `{"name": "site", "devDependencies": {"vite": "^5.4.0"}}`})
	expect("vite", vite)
	next := deploy("next site", sitePart{"package.json", `{"dependencies": {"next": "15.0.3", "react": "19.0.0"}}`})
	expect("next", next)
	plain := deploy("plain site", sitePart{"assets/app.js", "js"})
	expect("static", plain)

	r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + vite + "/rollback", Token: a.Token})
	if r.Status != http.StatusCreated {
		t.Fatalf("rollback: %d %s", r.Status, r.Body)
	}
	back := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, back, "live")
	expect("vite", back)

	tarball := sourceTarball(t, map[string]string{"package.json": `{"devDependencies": {"vite": "^5"}}`, "index.html": "src"})
	r = deploySource(t, s, a.Token, slug, tarball, "")
	if r.Status != http.StatusBadRequest || r.Map(t)["code"] != "kind_mismatch" {
		t.Fatalf("source tarball to a static app: %d %s", r.Status, r.Body)
	}
	expect("vite", back)
}
