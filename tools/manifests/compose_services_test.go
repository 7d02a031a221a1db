package manifests

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeService is what these checks read of one service in docker-compose.yml.
type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []any             `yaml:"volumes"` // short "src:dst[:mode]" or long form
	Ports       []string          `yaml:"ports"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Build *struct {
		Args map[string]string `yaml:"args"`
	} `yaml:"build"`
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f
}

// pinnedImage reports whether an image names a version (a tag with a digit, not latest) or
// a digest, as the Kubernetes manifests must.
func pinnedImage(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	_, tag, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	return ok && tag != "latest" && strings.ContainsAny(tag, "0123456789")
}

func TestPinnedImage(t *testing.T) {
	for image, want := range map[string]bool{
		"versity/versitygw:v1.8.0": true, "postgres:15.10-alpine": true, "x@sha256:ab": true,
		"versity/versitygw": false, "redis:latest": false, "registry:5000/x": false, "x:alpine": false,
	} {
		if got := pinnedImage(image); got != want {
			t.Errorf("pinnedImage(%q) = %v, want %v", image, got, want)
		}
	}
}

// Every image compose pulls is pinned to a version, and every long-running service has a
// healthcheck (a one-shot is one another service waits on to complete).
func TestComposeImagesArePinnedAndServicesChecked(t *testing.T) {
	f := readCompose(t)
	oneShot := map[string]bool{}
	for _, s := range f.Services {
		for dep, d := range s.DependsOn {
			if d.Condition == "service_completed_successfully" {
				oneShot[dep] = true
			}
		}
	}
	for name, s := range f.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("%s has neither image nor build", name)
		}
		if s.Image != "" && !pinnedImage(s.Image) {
			t.Errorf("%s: image %s is not pinned to a version", name, s.Image)
		}
		if !oneShot[name] && (s.Healthcheck == nil || len(s.Healthcheck.Test) == 0) {
			t.Errorf("%s runs on and has no healthcheck", name)
		}
		for dep, d := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which compose does not run", name, dep)
			}
			if d.Condition == "service_healthy" && f.Services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}
}

// objectStoreVersion is the versitygw version scripts/objectstore-build.sh builds for make
// run and the tests.
func objectStoreVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../scripts/objectstore-build.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version=(v[0-9][^\s]*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/objectstore-build.sh pins no version= line")
	}
	return string(m[1])
}

// Compose runs the S3 server deploys and the zone cannot start without: the same server and
// version as make run, its data and accounts on named volumes, healthy before the bootstrap
// makes the accounts and buckets and before deploys and the zone agent start; deploys keeps no
// folder; dump URLs are signed for the address the store is published on.
func TestComposeRunsTheObjectStore(t *testing.T) {
	f := readCompose(t)
	const name = "objectstore"
	s, ok := f.Services[name]
	if !ok {
		t.Fatalf("docker-compose.yml runs no %s service: deploys refuses to start without an object store and the zone has no bucket", name)
	}
	if want := "versity/versitygw:" + objectStoreVersion(t); s.Image != want && !strings.HasPrefix(s.Image, want+"@") {
		t.Errorf("%s runs %s, want %s (the server and version scripts/objectstore-build.sh builds for make run)", name, s.Image, want)
	}
	backend := slices.Index(s.Command, "posix")
	if backend < 0 || backend != len(s.Command)-2 {
		t.Fatalf("%s's command %v does not end in the posix backend and its folder", name, s.Command)
	}
	var port, iamDir string
	for _, arg := range s.Command[:backend] {
		if v, ok := strings.CutPrefix(arg, "--port=:"); ok {
			port = v
		}
		if v, ok := strings.CutPrefix(arg, "--iam-dir="); ok {
			iamDir = v
		}
	}
	if port == "" || iamDir == "" {
		t.Fatalf("%s's command %v names no --port=:<port> or --iam-dir=<folder>", name, s.Command)
	}
	for _, dir := range []string{s.Command[backend+1], iamDir} {
		onVolume := false
		for _, v := range s.Volumes {
			short, _ := v.(string)
			src, dst, _ := strings.Cut(short, ":")
			if _, named := f.Volumes[src]; named && strings.SplitN(dst, ":", 2)[0] == dir {
				onVolume = true
			}
		}
		if !onVolume {
			t.Errorf("%s keeps %s on no named volume: a recreated container would lose every object or account", name, dir)
		}
	}
	if s.Healthcheck == nil || !strings.Contains(strings.Join(s.Healthcheck.Test, " "), ":"+port+"/") {
		t.Errorf("%s's healthcheck does not ask the gateway on port %s", name, port)
	}

	for _, svc := range []string{"bootstrap", "deploys", "zoneagent"} {
		if f.Services[svc].DependsOn[name].Condition != "service_healthy" {
			t.Errorf("%s does not wait for %s to be healthy", svc, name)
		}
	}
	if vols := f.Services["deploys"].Volumes; len(vols) > 0 {
		t.Errorf("deploys mounts %v: its artifacts live in the object store, in no folder", vols)
	}

	// Only the S3 port is published, and the zone signs customers' dump URLs for it.
	if len(s.Ports) != 1 {
		t.Fatalf("%s publishes %v, want the S3 port alone", name, s.Ports)
	}
	parts := strings.Split(s.Ports[0], ":")
	if parts[len(parts)-1] != port || len(parts) < 2 {
		t.Fatalf("%s publishes %s, want <host port>:%s", name, s.Ports[0], port)
	}
	public := f.Services["zoneagent"].Environment["OBJECT_STORE_PUBLIC_URL"]
	u, err := url.Parse(public)
	if err != nil || u.Port() != parts[len(parts)-2] {
		t.Errorf("the zone agent's OBJECT_STORE_PUBLIC_URL %q does not name the port %s publishes (%s): dump download URLs would lead nowhere", public, name, s.Ports[0])
	}
}
