package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tori.dev/pkg/bus"
)

// These tests read the committed deployment files (docker-compose.yml, deployments/) and
// hold them to what the bootstrap promises: no credential is written in a committed file,
// and each workload is handed its own credentials and nobody else's. Only the bootstrap
// sees the admin URLs, only apps sees the Vault token, and the gateway's signing key goes to
// the gateway and the services alone.

const root = "../.."

// extraSecrets are what a workload holds besides its own credentials and the signing key.
var extraSecrets = map[string][]string{
	bus.PrincipalApps:    {"vault"},         // VAULT_ADDR, VAULT_TOKEN
	bus.PrincipalGateway: {"gateway-redis"}, // REDIS_URL: rate limits shared by every gateway
}

// adminSecret is the bootstrap's own file: DATABASE_URL and AMQP_URL as an admin.
const adminSecret = "bootstrap"

func TestCommittedDeploymentFilesHoldNoCredential(t *testing.T) {
	literal := []*regexp.Regexp{
		regexp.MustCompile(`postgres:postgres`),
		regexp.MustCompile(`guest:guest`),
		// A URL with a password in it, unless the password is a ${VARIABLE} compose fills in.
		regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^/\s:@'"]*:([^$/\s@'"][^/\s@'"]*)@`),
		// A secret-looking variable given a value in the file itself.
		regexp.MustCompile(`\b[A-Z_]*(PASSWORD|PASS|SECRET|TOKEN|SIGNING_KEY)\b["']?\s*[:=]\s*["']?[^\s"'{$]`),
		regexp.MustCompile(`\b(password|passwd|secret|token)["']?\s*[:=]\s*["']?[^\s"'{$]`),
		regexp.MustCompile(`-\s*\{?\s*name:\s*[A-Z_]*(PASSWORD|SECRET|TOKEN|SIGNING_KEY)\s*,\s*value:`),
	}
	for _, path := range deploymentFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, re := range literal {
				if re.MatchString(line) {
					t.Errorf("%s:%d holds a credential: %s", rel(path), i+1, strings.TrimSpace(line))
					break
				}
			}
		}
	}
	for _, doc := range k8sDocs(t) {
		if doc.Kind == "Secret" {
			t.Errorf("deployments/k8s/%s commits a Secret (%s): secrets come from untracked files (secretGenerator)", doc.file, doc.Metadata.Name)
		}
	}
}

// deploymentFiles are every committed file that describes how Tori is deployed.
func deploymentFiles(t *testing.T) []string {
	out := []string{filepath.Join(root, "docker-compose.yml")}
	err := filepath.WalkDir(filepath.Join(root, "deployments"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && ignored(t, path) {
			return filepath.SkipDir
		}
		if !d.IsDir() && !ignored(t, path) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ignored reports whether git ignores path: the generated secret folders must be.
func ignored(t *testing.T, path string) bool {
	t.Helper()
	err := exec.Command("git", "-C", root, "check-ignore", "-q", rel(path)).Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return false
	} else if err != nil {
		t.Fatalf("git check-ignore %s: %v", path, err)
	}
	return true
}

func rel(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}

// ---- compose ----

type composeService struct {
	Image string `yaml:"image"`
	Build struct {
		Args map[string]string `yaml:"args"`
	} `yaml:"build"`
	EnvFile     envFiles          `yaml:"env_file"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []any             `yaml:"volumes"`
}

// envFiles accepts every form compose does: a string, a list of strings, a list of {path, required}.
type envFiles []string

func (e *envFiles) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*e = envFiles{n.Value}
		return nil
	}
	var items []yaml.Node
	if err := n.Decode(&items); err != nil {
		return err
	}
	for _, it := range items {
		if it.Kind == yaml.ScalarNode {
			*e = append(*e, it.Value)
			continue
		}
		var long struct {
			Path string `yaml:"path"`
		}
		if err := it.Decode(&long); err != nil {
			return err
		}
		*e = append(*e, long.Path)
	}
	return nil
}

func composeServices(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f.Services
}

// composeSecretDir is where scripts/compose-secrets.sh writes; compose names files under it.
const composeSecretDir = "deployments/compose/secrets/"

// secretName is the file's name without folder and .env, or "" for a file outside the folder.
func secretName(path string) string {
	path = strings.TrimPrefix(path, "./")
	if !strings.HasPrefix(path, composeSecretDir) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(path, composeSecretDir), ".env")
}

// composeWant is the set of secret files each compose service may read, by service name.
func composeWant(services map[string]composeService) map[string][]string {
	want := map[string][]string{
		"postgres":      {"postgres"},
		"zone-postgres": {"zone-postgres"},
		"redis":         {"redis"},
		"rabbitmq":      nil,
		// compose's dev Vault holds its root token; the one-shot that makes the transit key
		// uses the token apps uses. The trace store and the console hold nothing.
		"vault":         {"vault-server"},
		"vault-transit": {"vault"},
		"jaeger":        nil,
		"console":       nil,
		// The S3 server holds its root key; the bootstrap gets the same key as its admin.
		"objectstore": {"objectstore"},
	}
	boot := []string{adminSecret}
	for _, p := range withDatabase(principals("local")) {
		boot = append(boot, p.Name)
	}
	for name, s := range services {
		svc := s.Build.Args["SERVICE"]
		switch {
		case svc == "bootstrap":
			want[name] = boot
		case svc != "":
			want[name] = append([]string{svc}, extraSecrets[svc]...)
			if svc != "zoneagent" {
				want[name] = append(want[name], "signing")
			}
		}
	}
	return want
}

func TestComposeHandsEachWorkloadOnlyItsOwnSecrets(t *testing.T) {
	services := composeServices(t)
	want := composeWant(services)
	for _, svc := range append(append([]string{}, bus.Services...), "bootstrap", "zoneagent") {
		if !builds(services, svc) {
			t.Errorf("docker-compose.yml runs no %s", svc)
		}
	}
	for name, s := range services {
		w, known := want[name]
		if !known {
			t.Errorf("compose service %s is neither a Tori workload nor known infrastructure: say what it may read", name)
			continue
		}
		var got []string
		for _, f := range s.EnvFile {
			n := secretName(f)
			if n == "" {
				t.Errorf("%s reads %s: credentials live under %s only", name, f, composeSecretDir)
				continue
			}
			got = append(got, n)
		}
		if !sameSet(got, w) {
			t.Errorf("%s reads secret files %v, want exactly %v", name, sorted(got), sorted(w))
		}
		for k := range s.Environment {
			if secretLooking(k) {
				t.Errorf("%s sets %s in the compose file: a secret belongs in its own env file", name, k)
			}
		}
		for _, v := range s.Volumes {
			src := volumeSource(v)
			if strings.Contains(strings.TrimPrefix(src, "./"), strings.TrimSuffix(composeSecretDir, "/")) &&
				!(name == "rabbitmq" && strings.TrimPrefix(src, "./") == composeSecretDir+"rabbitmq-definitions.json") {
				t.Errorf("%s mounts %s: only the broker mounts one file of the secret folder, its definitions", name, src)
			}
		}
	}
	if !ignored(t, filepath.Join(root, composeSecretDir, "identity.env")) {
		t.Errorf("%s is not ignored by git", composeSecretDir)
	}
	gw := services["gateway"]
	if gw.Environment["RATE_LIMIT_STORE"] != "redis" {
		t.Errorf("the gateway's RATE_LIMIT_STORE is %q, want redis (REDIS_URL from its own file)", gw.Environment["RATE_LIMIT_STORE"])
	}
}

// TestComposeSecretsScriptGivesEachServiceOnlyItsCredentials runs scripts/compose-secrets.sh
// into a scratch folder and puts together each compose service's whole environment as compose
// would: its environment block and the files it names. Each service must find its own URLs and
// no other workload's password, the admin URLs only in the bootstrap, the Vault token only in
// apps.
func TestComposeSecretsScriptGivesEachServiceOnlyItsCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets") // the bootstrap writes DATA_DIR/secrets
	script := func() {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "compose-secrets.sh"))
		cmd.Env = append(os.Environ(), "TORI_SECRETS_DIR="+dir, "VAULT_ADDR=https://vault.example:8200", "VAULT_TOKEN=hvs.test-token-0123456789")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compose-secrets.sh: %v\n%s", err, out)
		}
	}
	script()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the secret folder's mode is %v, want 0700", fi.Mode().Perm())
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		// The broker's definitions hold only salted hashes; the broker's own user reads them.
		if fi.Mode().Perm() != 0o600 && filepath.Base(f) != "rabbitmq-definitions.json" {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
	// A second run keeps every password: a restart must not lock anyone out.
	before := readAll(t, files)
	script()
	for f, content := range readAll(t, files) {
		if filepath.Base(f) != "rabbitmq-definitions.json" && content != before[f] {
			t.Errorf("a second run changed %s", filepath.Base(f))
		}
	}

	services := composeServices(t)
	envs := map[string]map[string]string{}
	for name, s := range services {
		env := map[string]string{}
		for k, v := range s.Environment {
			env[k] = v
		}
		for _, f := range s.EnvFile {
			n := secretName(f)
			if n == "" {
				continue
			}
			vars, err := readEnvFile(filepath.Join(dir, n+".env"))
			if err != nil {
				t.Fatal(err)
			}
			if len(vars) == 0 && n != "vault" {
				t.Errorf("%s reads %s.env, which the script leaves empty or does not write", name, n)
			}
			for k, v := range vars {
				env[k] = v
			}
		}
		envs[name] = env
	}

	// Every password the script made, by the workload it belongs to.
	owner := map[string]string{}
	for _, p := range principals("local") {
		vars, err := readEnvFile(filepath.Join(dir, p.Name+".env"))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range vars {
			if pw := passwordIn(v); pw != "" {
				owner[pw] = p.Name
			} else if strings.HasSuffix(k, "_OBJECT_STORE_SECRET_KEY") {
				owner[v] = p.Name
			} else if strings.HasSuffix(k, "_URL") && k != objectStoreURLVar { // an endpoint, no credentials
				t.Errorf("%s.env: %s has no password", p.Name, k)
			}
		}
	}
	// The clusters' superuser passwords and the object store's root secret: the bootstrap
	// and each server itself alone.
	admin := map[string]string{}
	for server, v := range map[string]string{"postgres": "POSTGRES_PASSWORD", "zone-postgres": "POSTGRES_PASSWORD", "objectstore": "ROOT_SECRET_KEY"} {
		vars, err := readEnvFile(filepath.Join(dir, server+".env"))
		if err != nil {
			t.Fatal(err)
		}
		if vars[v] == "" {
			t.Fatalf("%s.env has no %s", server, v)
		}
		admin[vars[v]] = server
	}
	for name, env := range envs {
		svc := services[name].Build.Args["SERVICE"]
		for k, v := range env {
			for pw, server := range admin {
				if strings.Contains(v, pw) && name != server && svc != "bootstrap" {
					t.Errorf("%s sees %s's superuser password (in %s)", name, server, k)
				}
			}
			for pw, who := range owner {
				if strings.Contains(v, pw) && who != svc && svc != "bootstrap" {
					t.Errorf("%s sees %s's password (in %s)", name, who, k)
				}
			}
			if (k == "DATABASE_URL" || k == "AMQP_URL") && svc != "bootstrap" {
				t.Errorf("%s sees the admin %s", name, k)
			}
			if k == "VAULT_TOKEN" && svc != bus.PrincipalApps && name != "vault-transit" {
				t.Errorf("%s sees VAULT_TOKEN", name)
			}
			if k == "GATEWAY_SIGNING_KEY" && (svc == "" || svc == "bootstrap" || svc == "zoneagent") {
				t.Errorf("%s sees the gateway's signing key", name)
			}
			if strings.HasSuffix(k, "_DATABASE_URL") || strings.HasSuffix(k, "_AMQP_URL") || strings.HasSuffix(k, "ZONE_POSTGRES_ADMIN_URL") {
				if svc != "bootstrap" && !strings.HasPrefix(k, strings.ToUpper(svc)+"_") && !(svc == "zoneagent" && k == zonePostgresVar) {
					t.Errorf("%s sees %s", name, k)
				}
			}
		}
		if svc != "" && svc != "bootstrap" {
			prefix := strings.ToUpper(svc)
			if env[prefix+"_DATABASE_URL"] == "" || env[prefix+"_AMQP_URL"] == "" {
				t.Errorf("%s lacks its own %s_DATABASE_URL or %s_AMQP_URL", name, prefix, prefix)
			}
			if env["GATEWAY_SIGNING_KEY"] == "" && svc != "zoneagent" {
				t.Errorf("%s lacks GATEWAY_SIGNING_KEY", name)
			}
		}
	}
	if envs["apps"]["VAULT_TOKEN"] == "" {
		t.Errorf("apps does not get VAULT_TOKEN from vault.env")
	}
	if !strings.HasPrefix(envs["gateway"]["REDIS_URL"], "redis://") {
		t.Errorf("the gateway has no REDIS_URL")
	}
	if passwordIn(envs["bootstrap"]["DATABASE_URL"]) == "" {
		t.Errorf("the bootstrap's admin DATABASE_URL has no password")
	}
	checkComposeObjectStore(t, services, envs)
}

// checkComposeObjectStore holds compose to what deploys and the zone need to start at all:
// each finds OBJECT_STORE_URL naming compose's S3 server and its own account and bucket, the
// bootstrap (which makes those accounts) the server's root key as its admin, and no other
// service anything of the store.
func checkComposeObjectStore(t *testing.T, services map[string]composeService, envs map[string]map[string]string) {
	t.Helper()
	server := ""
	for name, s := range services {
		if strings.HasPrefix(s.Image, "versity/versitygw:") {
			server = name
		}
	}
	if server == "" {
		t.Fatal("docker-compose.yml runs no S3 server (versity/versitygw): deploys would not start and the zone has no bucket")
	}
	root := envs[server]
	if root["ROOT_ACCESS_KEY"] == "" || root["ROOT_SECRET_KEY"] == "" {
		t.Errorf("%s gets no ROOT_ACCESS_KEY/ROOT_SECRET_KEY", server)
	}
	boot := envs["bootstrap"]
	if boot["OBJECT_STORE_ADMIN_ACCESS_KEY"] != root["ROOT_ACCESS_KEY"] || boot["OBJECT_STORE_ADMIN_SECRET_KEY"] != root["ROOT_SECRET_KEY"] {
		t.Errorf("the bootstrap's OBJECT_STORE_ADMIN_* are not %s's root key: it could make no account or bucket", server)
	}
	holders := map[string]string{"deploys": "tori-artifacts", "zoneagent": "tori-zone-local"}
	for name, env := range envs {
		svc := services[name].Build.Args["SERVICE"]
		bucket, holds := holders[svc]
		if svc == "bootstrap" {
			holds = true
		}
		for k := range env {
			if strings.Contains(k, "OBJECT_STORE") && !holds {
				t.Errorf("%s sees %s: only deploys and the zone hold object-store settings", name, k)
			}
		}
		if bucket == "" {
			continue
		}
		want := "http://" + server + ":7070"
		if env[objectStoreURLVar] != want {
			t.Errorf("%s's OBJECT_STORE_URL is %q, want %q (compose's S3 server)", name, env[objectStoreURLVar], want)
		}
		pre := strings.ToUpper(svc) + "_OBJECT_STORE_"
		if env[pre+"ACCESS_KEY"] == "" || len(env[pre+"SECRET_KEY"]) < 32 || env[pre+"BUCKET"] != bucket {
			t.Errorf("%s lacks its own account or bucket: access %q, secret set %v, bucket %q (want %s)",
				name, env[pre+"ACCESS_KEY"], env[pre+"SECRET_KEY"] != "", env[pre+"BUCKET"], bucket)
		}
	}
	if envs["zoneagent"]["OBJECT_STORE_PUBLIC_URL"] == "" {
		t.Errorf("the zone agent has no OBJECT_STORE_PUBLIC_URL: dump download URLs would name http://%s:7070, which no browser reaches", server)
	}
}

func readAll(t *testing.T, files []string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}

func builds(services map[string]composeService, svc string) bool {
	for _, s := range services {
		if s.Build.Args["SERVICE"] == svc {
			return true
		}
	}
	return false
}

// volumeSource is a compose volume's source, short ("src:dst[:ro]") or long form.
func volumeSource(v any) string {
	switch v := v.(type) {
	case string:
		return strings.SplitN(v, ":", 2)[0]
	case map[string]any:
		s, _ := v["source"].(string)
		return s
	}
	return ""
}

var secretKey = regexp.MustCompile(`(?i)(PASSWORD|PASS|SECRET|TOKEN|SIGNING_KEY)$|(^|_)(DATABASE|AMQP|REDIS)_URL$|^ZONE_POSTGRES_ADMIN_URL$`)

func secretLooking(name string) bool { return secretKey.MatchString(name) }

// ---- Kubernetes ----

type k8sDoc struct {
	file     string
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	Containers     []container `yaml:"containers"`
	InitContainers []container `yaml:"initContainers"`
	Volumes        []struct {
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
		Projected *struct {
			Sources []struct {
				Secret *struct {
					Name string `yaml:"name"`
				} `yaml:"secret"`
			} `yaml:"sources"`
		} `yaml:"projected"`
	} `yaml:"volumes"`
}

type container struct {
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	EnvFrom []struct {
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
}

// secrets are the names of every Secret the pod reads, in any way.
func (p podSpec) secrets() []string {
	var out []string
	for _, c := range append(append([]container{}, p.Containers...), p.InitContainers...) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				out = append(out, e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for _, v := range p.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					out = append(out, s.Secret.Name)
				}
			}
		}
	}
	return out
}

func (p podSpec) env(name string) string {
	for _, c := range p.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

const k8sDir = "deployments/k8s"

func k8sDocs(t *testing.T) []k8sDoc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, k8sDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []k8sDoc
	for _, path := range paths {
		if filepath.Base(path) == "kustomization.yaml" {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			var d k8sDoc
			if err := dec.Decode(&d); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("%s: %v", path, err)
			}
			d.file = filepath.Base(path)
			out = append(out, d)
		}
		f.Close()
	}
	return out
}

type kustomization struct {
	Resources       []string `yaml:"resources"`
	SecretGenerator []struct {
		Name     string   `yaml:"name"`
		Envs     []string `yaml:"envs"`
		Files    []string `yaml:"files"`
		Literals []string `yaml:"literals"`
	} `yaml:"secretGenerator"`
}

func TestKubernetesMountsOnlyEachWorkloadsOwnSecrets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for _, g := range k.SecretGenerator {
		generated[g.Name] = true
		if len(g.Literals) > 0 {
			t.Errorf("secretGenerator %s has literals: a value in a committed file", g.Name)
		}
		for _, src := range append(append([]string{}, g.Envs...), g.Files...) {
			src = src[strings.Index(src, "=")+1:]
			if !strings.HasPrefix(src, "secrets/") || !ignored(t, filepath.Join(root, k8sDir, src)) {
				t.Errorf("secretGenerator %s reads %s: its sources live in the untracked %s/secrets/", g.Name, src, k8sDir)
			}
		}
	}

	docs := k8sDocs(t)
	workloads := map[string]k8sDoc{}
	for _, d := range docs {
		if !slices.Contains(k.Resources, d.file) {
			t.Errorf("%s is not in kustomization.yaml's resources", d.file)
		}
		switch d.Kind {
		case "Deployment", "StatefulSet", "DaemonSet", "Job":
			workloads[d.Metadata.Name] = d
		case "ConfigMap":
			for key, v := range d.Data {
				if secretLooking(key) || passwordIn(v) != "" {
					t.Errorf("ConfigMap %s holds %s: a secret in a ConfigMap every pod reads", d.Metadata.Name, key)
				}
			}
		}
	}

	job, ok := workloads["tori-bootstrap"]
	if !ok || job.Kind != "Job" {
		t.Errorf("no Job tori-bootstrap: the bootstrap makes each service's role and schema in the cluster")
	}
	zone := job.Spec.Template.Spec.env("ZONE_ID")
	if zone == "" {
		zone = "local"
	}
	want := map[string][]string{"tori-bootstrap": {"tori-" + adminSecret}, "redis": {"tori-redis"}}
	for _, p := range withDatabase(principals(zone)) {
		want["tori-bootstrap"] = append(want["tori-bootstrap"], "tori-"+p.Name)
	}
	for _, svc := range bus.Services {
		w := []string{"tori-" + svc, "tori-signing"}
		for _, e := range extraSecrets[svc] {
			w = append(w, "tori-"+e)
		}
		want[svc] = w
		if _, ok := workloads[svc]; !ok {
			t.Errorf("no Deployment %s", svc)
		}
	}
	for name, d := range workloads {
		w, known := want[name]
		if !known {
			t.Errorf("%s %s is neither a Tori workload nor known infrastructure: say which secrets it may read", d.Kind, name)
			continue
		}
		got := d.Spec.Template.Spec.secrets()
		if !sameSet(got, w) {
			t.Errorf("%s %s reads Secrets %v, want exactly %v", d.Kind, name, sorted(got), sorted(w))
		}
		for _, s := range got {
			if !generated[s] {
				t.Errorf("%s %s reads Secret %s, which no secretGenerator makes", d.Kind, name, s)
			}
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if secretLooking(e.Name) && e.ValueFrom == nil {
					t.Errorf("%s %s sets %s in the manifest", d.Kind, name, e.Name)
				}
			}
		}
	}
	gw := workloads[bus.PrincipalGateway].Spec.Template.Spec
	if gw.env("RATE_LIMIT_STORE") != "redis" {
		t.Errorf("the gateway's RATE_LIMIT_STORE is %q, want redis: several gateways share the rate windows", gw.env("RATE_LIMIT_STORE"))
	}
	if _, ok := workloads["redis"]; !ok {
		t.Errorf("no redis Deployment for the gateways' shared rate windows")
	}
}

// withDatabase are the principals whose role the in-cluster bootstrap makes: it needs their
// database URLs (broker users come from the definitions the broker loads).
func withDatabase(ps []principal) []principal {
	var out []principal
	for _, p := range ps {
		if p.DB.Schema != "" {
			out = append(out, p)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}
