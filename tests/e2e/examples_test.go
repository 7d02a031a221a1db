package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// examplesDir is the repository's examples/, which the README's walkthrough deploys.
const examplesDir = "../../examples"

// exampleTarball packs examples/<name> as tori deploy would send a service folder (without
// what a local install or build leaves: node_modules, bin).
func exampleTarball(t *testing.T, name string) []byte {
	t.Helper()
	root := filepath.Join(examplesDir, name)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "node_modules" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "tori.json" {
			t.Fatalf("example %s has a manifest: the examples show builds without one", name)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// waitBuilt waits (as long as a plan's build may take) until the deploy is live, failing on
// any other end. It asks every two seconds: the examples share one account, whose reads of
// a route are rate limited (600 a minute).
func waitBuilt(t *testing.T, s *harness.Stack, token, slug, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Minute)
	for {
		r := s.Get(t, "/api/apps/"+slug+"/deploys/"+id, token)
		if r.Status != http.StatusOK {
			t.Fatalf("get deploy: %d %s", r.Status, r.Body)
		}
		last := r.Map(t)
		switch last["status"] {
		case "live":
			return last
		case "building", "releasing":
		default:
			t.Fatalf("deploy %s ended %v (error %v); logs:\n%s", id, last["status"], last["error"], logText(t, s, token, slug))
		}
		if time.Now().After(deadline) {
			t.Fatalf("deploy %s still %v after 15 minutes; logs:\n%s", id, last["status"], logText(t, s, token, slug))
		}
		time.Sleep(2 * time.Second)
	}
}

// logText is the app's log lines of the last hour, one a line as stream: message.
func logText(t *testing.T, s *harness.Stack, token, slug string) string {
	t.Helper()
	var logs struct {
		Entries []struct{ Stream, Message string } `json:"entries"`
	}
	s.Get(t, "/api/apps/"+slug+"/logs?limit=500", token).JSON(t, &logs)
	var b strings.Builder
	for _, e := range logs.Entries {
		b.WriteString(e.Stream + ": " + e.Message + "\n")
	}
	return b.String()
}

// Each example of examples/ deploys without a manifest and answers through the edge: the
// Node service (npm ci of its lockfile's express and peers, from the npm registry), the
// Python service (python3 app.py), the Go service (go build with the zone's Go, its module
// from the Go module proxy), and the Vite site uploaded built (framework vite). Each
// service's deploy names what was detected, and its logs say so in one system line.
// On flock (the operator command), so that builds get its two CPUs and 45 build minutes.
func TestExamplesDeployWithoutAManifest(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "examples")
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock"); err != nil {
		t.Fatalf("set-plan: %v\n%s", err, out)
	}
	harness.Eventually(t, 10*time.Second, "flock to reach the account", func() bool {
		return s.Get(t, "/api/account", a.Token).Map(t)["plan"] == "flock"
	})

	for _, ex := range []struct {
		dir, detected, command, start, answer string
	}{
		{"node-express", "node", "npm ci", "npm start", "hello from express"},
		{"python-service", "python", "", "python3 app.py", "hello from python"},
		{"go-service", "go", "go build -o bin/go-service .", "bin/go-service", "hello from go"},
	} {
		t.Run(ex.dir, func(t *testing.T) {
			t.Parallel()
			slug := createApp(t, s, a.Token, "service")
			r := deploySource(t, s, a.Token, slug, exampleTarball(t, ex.dir), "")
			if r.Status != http.StatusCreated {
				t.Fatalf("deploy: %d %s", r.Status, r.Body)
			}
			id := r.Map(t)["id"].(string)
			d := waitBuilt(t, s, a.Token, slug, id)
			waitEdge(t, s, slug, "/", ex.answer)

			build, _ := d["build"].(map[string]any)
			var command any = ex.command
			if ex.command == "" {
				command = nil
			}
			if build["detected"] != ex.detected || build["command"] != command || build["start"] != ex.start {
				t.Fatalf("the deploy's build: %v", d["build"])
			}
			if logs := logText(t, s, a.Token, slug); !strings.Contains(logs, "system: Build detected: "+ex.detected+" (") {
				t.Fatalf("no system line saying what was detected:\n%s", logs)
			}
		})
	}

	t.Run("vite-site", func(t *testing.T) {
		t.Parallel()
		slug := createApp(t, s, a.Token, "static")
		var files []sitePart
		dist := filepath.Join(examplesDir, "vite-site", "dist")
		filepath.WalkDir(dist, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dist, p)
			files = append(files, sitePart{filepath.ToSlash(rel), string(b)})
			return nil
		})
		if len(files) < 3 {
			t.Fatalf("examples/vite-site/dist holds %d files: build it (npm run build)", len(files))
		}
		r := deployFiles(t, s, a.Token, slug, files...)
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		id := r.Map(t)["id"].(string)
		waitBuilt(t, s, a.Token, slug, id)
		harness.Eventually(t, 30*time.Second, "the built page at the edge", func() bool {
			status, body := edgeGet(t, s, slug, "/")
			return status == http.StatusOK && strings.Contains(body, "Hello from Vite on Tori") && strings.Contains(body, "/assets/index-")
		})
		harness.Eventually(t, 10*time.Second, "framework vite", func() bool {
			time.Sleep(200 * time.Millisecond)
			app := s.Get(t, "/api/apps/"+slug, a.Token).Map(t)
			return app["currentDeployId"] == id && app["framework"] == "vite"
		})
		if d := s.Get(t, "/api/apps/"+slug+"/deploys/"+id, a.Token).Map(t); d["build"] != nil {
			t.Fatalf("a static deploy has a build: %v", d["build"])
		}
	})
}

// A source whose package.json is not valid JSON fails before anything runs, with
// invalid_source, and the deploy's logs name the file and where it broke.
func TestABrokenPackageJSONFailsNamingTheFileInTheLogs(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "brokenpkg")
	slug := createApp(t, s, a.Token, "service")
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{
		"package.json": "{\n  \"name\": \"broken\",\n  \"scripts\": {\"start\": \"node server.js\"\n}\n",
		"server.js":    nodeServer,
	}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["id"].(string)
	d := waitStatus(t, s, a.Token, slug, id, "failed")
	if d["error"] != "invalid_source" || d["build"] != nil {
		t.Fatalf("deploy: %v", d)
	}
	harness.Eventually(t, 15*time.Second, "the failure naming package.json in the logs", func() bool {
		return strings.Contains(logText(t, s, a.Token, slug), "system: Deploy failed: package.json is not valid JSON: ")
	})
}
