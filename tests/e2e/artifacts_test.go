package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// tarEntry is one entry of a hand-made source tarball: a file, a link or a FIFO.
type tarEntry struct {
	name, body, link string
	typ              byte
}

func hostileTarball(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typ, Linkname: e.link}
		if e.typ == 0 {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// Hostile source tarballs fail their own deploy with invalid_artifact and the reason in the
// app's logs; the app's live revision and another app keep answering the edge after each.
func TestHostileArtifactsFailOnlyTheirDeploy(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "artifacts")

	neighbour := createApp(t, s, a.Token, "static")
	r := deployFiles(t, s, a.Token, neighbour, sitePart{name: "index.html", body: "neighbour"})
	if r.Status != http.StatusCreated {
		t.Fatalf("static deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, neighbour, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, neighbour, "/", "neighbour")

	slug := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	good := sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"1"}`})
	r = deploySource(t, s, a.Token, slug, good, "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "none unreleased 1")

	start := tarEntry{name: "tori.json", body: string(manifest)}
	server := tarEntry{name: "server.js", body: nodeServer}
	link := func(name, target string) tarEntry { return tarEntry{name: name, link: target, typ: tar.TypeSymlink} }
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		says    string // in the system log line of the failed deploy
	}{
		// Each link stays inside read alone; followed through the tree, `etc` is the
		// tree's parent.
		{"link chain", []tarEntry{start, server, link("x/up", ".."), link("etc", "x/up/..")}, `link "etc" leads out of the tree`},
		{"link chain a→b→../..", []tarEntry{start, server, link("a", "b/.."), link("b", "x/up"), link("x/up", "..")}, `link "a" leads out of the tree`},
		{"manifest pointing at /dev/zero", []tarEntry{server, link("tori.json", "/dev/zero")}, "only relative links"},
		{"manifest that is a link inside", []tarEntry{server, {name: "m.json", body: string(manifest)}, link("tori.json", "m.json")}, "tori.json is a link"},
		{"manifest that is a FIFO", []tarEntry{server, {name: "tori.json", typ: tar.TypeFifo}}, `"tori.json" is a FIFO`},
		{"a device", []tarEntry{start, server, {name: "zero", typ: tar.TypeChar}}, `"zero" is a character device`},
		{"hard link out", []tarEntry{start, server, {name: "shadow", link: "/etc/shadow", typ: tar.TypeLink}}, "a hard link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := deploySource(t, s, a.Token, slug, hostileTarball(t, tc.entries...), "")
			if r.Status != http.StatusCreated {
				t.Fatalf("deploy: %d %s", r.Status, r.Body)
			}
			id := r.Map(t)["id"].(string)
			failed := waitStatus(t, s, a.Token, slug, id, "failed")
			if failed["error"] != "invalid_artifact" {
				t.Fatalf("failed deploy: %v", failed)
			}
			harness.Eventually(t, 15*time.Second, "the reason in the app's logs", func() bool {
				var logs struct {
					Entries []struct{ Stream, Message, DeployID string } `json:"entries"`
				}
				s.Get(t, "/api/apps/"+slug+"/logs", a.Token).JSON(t, &logs)
				for _, e := range logs.Entries {
					if e.DeployID == id && e.Stream == "system" && strings.Contains(e.Message, tc.says) {
						if strings.Contains(e.Message, s.DataDir) || strings.Contains(e.Message, "/tmp/") {
							t.Fatalf("the reason shows a host path: %q", e.Message)
						}
						return true
					}
				}
				return false
			})
			// The deploy failed, the zone did not: the live revision and the other app answer.
			waitEdge(t, s, slug, "/", "none unreleased 1")
			waitEdge(t, s, neighbour, "/", "neighbour")
		})
	}

	// And the zone still takes a good deploy after them all.
	next := sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"2"}`})
	r = deploySource(t, s, a.Token, slug, next, "")
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slug, "/", "none unreleased 2")
}
