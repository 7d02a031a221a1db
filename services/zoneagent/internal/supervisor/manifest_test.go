package supervisor

import (
	"archive/tar"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// The plan (tori.json and the files detection reads) on trees as an app may leave them:
// after a nap the agent plans again from a tree the app could write to.
func TestPlanFromAHostileTree(t *testing.T) {
	write := func(name, body string) func(string) error {
		return func(dir string) error { return os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	}
	for _, tc := range []struct {
		name  string
		make  func(dir string) error
		code  string // the failure's code; "" when the plan is good
		names string // what the failure's message names
	}{
		{"good", write(ManifestName, `{"start":"node s.js","release":"a b"}`), "", ""},
		{"missing, and nothing else", func(string) error { return nil }, CodeInvalidSource, ManifestName},
		{"malformed", write(ManifestName, `{`), CodeInvalidSource, ManifestName},
		{"no start, and nothing else", write(ManifestName, `{}`), CodeInvalidSource, ManifestName},
		{"link to /dev/zero", func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, ManifestName)) }, revision.CodeInvalidArtifact, ManifestName},
		{"link to a host file", func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, ManifestName)) }, revision.CodeInvalidArtifact, ManifestName},
		{"link inside", func(dir string) error {
			os.WriteFile(filepath.Join(dir, "m.json"), []byte(`{"start":"x"}`), 0o644)
			return os.Symlink("m.json", filepath.Join(dir, ManifestName))
		}, revision.CodeInvalidArtifact, ManifestName},
		{"fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, ManifestName), 0o644) }, revision.CodeInvalidArtifact, ManifestName},
		{"huge", write(ManifestName, `{"start":"x","build":"`+strings.Repeat("y", MaxManifestBytes)+`"}`), revision.CodeInvalidArtifact, ManifestName},
		{"package.json links to a host file", func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "package.json")) }, revision.CodeInvalidArtifact, "package.json"},
		{"package.json is a FIFO", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "package.json"), 0o644) }, revision.CodeInvalidArtifact, "package.json"},
		{"a broken package.json", write("package.json", `{"scripts": {"start": "node s.js"`), CodeInvalidSource, "package.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(dir); err != nil {
				t.Fatal(err)
			}
			plan, m, release, err := (&SourceRuntime{Sandbox: &sandbox.Sandbox{Policy: sandbox.Policy{GoRoot: "/usr/local/go"}}}).planBuild(dir)
			if tc.code == "" {
				if err != nil || plan.Start != "node s.js" || strings.Join(release, " ") != "a b" || m.HealthPath != "/" {
					t.Fatalf("%+v %+v %q %v", plan, m, release, err)
				}
				return
			}
			var fe *revision.FailError
			if !errors.As(err, &fe) || fe.Code != tc.code || !strings.Contains(fe.Message, tc.names) {
				t.Fatalf("failure %v, want code %s naming %s", err, tc.code, tc.names)
			}
		})
	}
}

// A hostile source tarball fails its own deploy as invalid_artifact, with the reason, keeps
// nothing, and the app's live revision keeps serving.
func TestHostileSourceTarballsFailTheirDeployOnly(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	good := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}), nil)
	ctx := context.Background()
	if err := r.l.Prepare(ctx, good, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	if err := r.l.Activate(ctx, good, "", revision.Formation{}); err != nil {
		t.Fatal(err)
	}
	start := manifest(map[string]any{"start": "true"})
	sym := func(name, target string) file { return file{name: name, link: target, typ: tar.TypeSymlink} }
	for _, tc := range []struct {
		name  string
		files []file
		says  string
	}{
		{"manifest links to /dev/zero", []file{sym(ManifestName, "/dev/zero")}, "only relative links"},
		{"manifest links inside", []file{{name: "m.json", body: `{"start":"true"}`}, sym(ManifestName, "m.json")}, "tori.json is a link"},
		{"manifest is a FIFO", []file{{name: ManifestName, typ: tar.TypeFifo}}, "is a FIFO"},
		{"manifest is a device", []file{{name: ManifestName, typ: tar.TypeChar}}, "a character device"},
		{"huge manifest", []file{{name: ManifestName, body: `{"start":"true","build":"` + strings.Repeat("y", MaxManifestBytes) + `"}`}}, "larger than"},
		{"link chain out", []file{start, sym("x/up", ".."), sym("e", "x/up/..")}, "leads out of the tree"},
		{"hard link out", []file{start, {name: "h", link: "/etc/shadow", typ: tar.TypeLink}}, "hard link"},
		{"entry path escapes", []file{start, {name: "a/../../../evil", body: "x"}}, "evil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := r.revision(app, tarball(t, tc.files...), nil)
			err := r.l.Prepare(ctx, rev, r.jobs)
			var fe *revision.FailError
			if !errors.As(err, &fe) || fe.Code != revision.CodeInvalidArtifact || !strings.Contains(fe.Message, tc.says) {
				t.Fatalf("got %v, want invalid_artifact saying %q", err, tc.says)
			}
			if strings.Contains(fe.Message, r.l.Identities.AppsDir) {
				t.Fatalf("the message shows a host path: %s", fe.Message)
			}
			if !errors.Is(err, artifact.ErrUnsafe) && !strings.Contains(fe.Message, "unsafe artifact") {
				t.Fatalf("not reported as unsafe: %v", err)
			}
			if err := r.l.Discard(ctx, app, rev.DeployID); err != nil {
				t.Fatal(err)
			}
			if got := r.get(app, good.DeployID, "/"); got != "ok unreleased" {
				t.Fatalf("the live revision answered %q", got)
			}
		})
	}
}

// Process declarations as a tree gives them: tori.json's `processes`, or a Procfile (its
// release: line the release Job unless tori.json gives one), and the refusals, each an
// invalid source naming what to fix.
func TestPlanProcesses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		want    string // the processes as name=command, "; "-joined
		release string
		code    string // the failure's code; "" when the plan is good
		says    string // what the failure's message says
	}{
		{name: "tori.json's processes, web first then by name",
			files: map[string]string{ManifestName: `{"processes":{"worker":"node w.js","clock":" node c.js ","web":"node s.js"}}`},
			want:  "web=node s.js; clock=node c.js; worker=node w.js"},
		{name: "tori.json's start beside a worker",
			files: map[string]string{ManifestName: `{"start":"node s.js","processes":{"worker":"node w.js"}}`},
			want:  "web=node s.js; worker=node w.js"},
		{name: "none declared: one web from start",
			files: map[string]string{ManifestName: `{"start":"node s.js"}`},
			want:  "web=node s.js"},
		{name: "start and processes.web both",
			files: map[string]string{ManifestName: `{"start":"node s.js","processes":{"web":"node t.js"}}`},
			code:  CodeInvalidSource, says: "tori.json gives both start and processes.web: keep one"},
		{name: "a bad name in tori.json",
			files: map[string]string{ManifestName: `{"processes":{"web":"x","Big_Worker":"y"}}`},
			code:  CodeInvalidSource, says: `tori.json: processes: "Big_Worker" is not a valid process name`},
		{name: "an empty command in tori.json",
			files: map[string]string{ManifestName: `{"processes":{"worker":""}}`},
			code:  CodeInvalidSource, says: "tori.json: processes: worker has no command"},
		{name: "processes of the wrong shape",
			files: map[string]string{ManifestName: `{"processes":["web"]}`},
			code:  CodeInvalidSource, says: "tori.json: processes: want an object"},
		{name: "a Procfile without tori.json, its release line the Job",
			files:   map[string]string{"Procfile": "web: ./serve\nworker: ./work\nrelease: ./migrate --all\n"},
			want:    "web=./serve; worker=./work",
			release: "/bin/sh -c ./migrate --all"},
		{name: "tori.json's release wins over the Procfile's",
			files:   map[string]string{ManifestName: `{"release":"./m1"}`, "Procfile": "web: ./serve\nrelease: ./m2\n"},
			want:    "web=./serve",
			release: "./m1"},
		{name: "a bad name in the Procfile",
			files: map[string]string{"Procfile": "web: ./serve\nWorker: ./work\n"},
			code:  CodeInvalidSource, says: `Procfile line 2: "Worker" is not a valid process name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			plan, _, release, err := (&SourceRuntime{Sandbox: &sandbox.Sandbox{}}).planBuild(dir)
			if tc.code != "" {
				var fe *revision.FailError
				if !errors.As(err, &fe) || fe.Code != tc.code || !strings.Contains(fe.Message, tc.says) {
					t.Fatalf("failure %v, want code %s saying %q", err, tc.code, tc.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range plan.ProcessList() {
				got = append(got, p.Name+"="+p.Command)
			}
			if strings.Join(got, "; ") != tc.want || strings.Join(release, " ") != tc.release {
				t.Fatalf("processes %q release %q, want %q and %q", got, release, tc.want, tc.release)
			}
		})
	}
}
