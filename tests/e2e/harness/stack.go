package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// Order in which services start; the gateway comes last.
var startOrder = []string{"identity", "billing", "apps", "deploys", "logs", "databases", "zoneagent", "gateway"}

// Options adjust one stack.
type Options struct {
	// Env is added to (and overrides) every service's environment.
	Env map[string]string
	// Redirect replaces, in every URL a service is given (its own credentials included), each
	// "host:port" key by its value: a test puts a proxy it can cut in front of a server.
	Redirect map[string]string
	// TwoZones runs a second zone agent beside the stack's: the stack's zone is eu-1 (region
	// eu) and the second "other" (region us), each with its own data, edge, pooler and uids
	// (zones.go; Stack.Zone(region) sees each).
	TwoZones bool
	// Replicas 2 runs a second process of every control-plane service and a second gateway
	// routing to those (replicas.go; Stack.Gateways).
	Replicas int
}

// Stack is one running control plane.
type Stack struct {
	t        testing.TB
	Gateway  string // http://host:port
	Edge     string // the zone's edge (plain HTTP: ACME challenges and 308s), when a zone agent runs
	EdgeTLS  string // host:port of the edge's HTTPS listener (EdgeClient, EdgeURL)
	Env      map[string]string
	DataDir  string
	LogDir   string
	SMTP     *SMTPServer
	bin      string
	creds    map[string]map[string]string // each service's own credentials, as bin/bootstrap writes them
	procs    map[string]*process
	services []string
	redirect map[string]string
	// Gateways are the base URLs of every gateway (Gateway first); Zones are the stack's
	// zones, the first one its own (zones.go, replicas.go).
	Gateways []string
	zones    []*Stack
	extras   map[string]extraProcess
	// ObjectStore is the stack's S3 server, with its root credentials (objectstore.go).
	ObjectStore testinfra.ObjectStore
}

// extraProcess is a process beside the stack's own services (a second zone, a replica): the
// binary it runs and the address it answers on, so Restart can start it again.
type extraProcess struct{ binary, addr string }

// Start runs every built service and waits until each answers /healthz.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	bin := Binaries(t)
	s := &Stack{t: t, bin: bin, procs: map[string]*process{}, creds: map[string]map[string]string{}, SMTP: NewSMTPServer(t), redirect: opts.Redirect}
	s.DataDir = t.TempDir()
	s.LogDir = t.TempDir()
	dbURL := testinfra.NewDatabase(t, "e2e_empty", func(context.Context, string) error { return nil })

	key := make([]byte, 32)
	rand.Read(key)
	env := map[string]string{
		// The admin URLs, for the test's own fakes and checks; no service is given them.
		"DATABASE_URL":        dbURL,
		"AMQP_URL":            testinfra.AMQPURL(t),
		"BUS_NAMESPACE":       testinfra.Namespace(t) + ".",
		"BUS_QUEUE_TYPE":      "classic",
		"BUS_QUEUE_EXPIRES":   "3m",
		"BUS_BASE_BACKOFF":    "50ms",
		"GATEWAY_SIGNING_KEY": hex.EncodeToString(key),
		"DATA_DIR":            s.DataDir,
		"SMTP_URL":            s.SMTP.URL(),
		"APPS_DOMAIN":         "apps.localhost",
		"LOG_LEVEL":           "debug",
	}
	addrVars := map[string]string{
		"gateway": "GATEWAY_ADDR", "identity": "IDENTITY_ADDR", "billing": "BILLING_ADDR",
		"apps": "APPS_ADDR", "deploys": "DEPLOYS_ADDR", "logs": "LOGS_ADDR",
		"databases": "DATABASES_ADDR", "zoneagent": "ZONEAGENT_ADDR",
	}
	urlVars := map[string]string{
		"identity": "IDENTITY_URL", "billing": "BILLING_URL", "apps": "APPS_URL",
		"deploys": "DEPLOYS_URL", "logs": "LOGS_URL", "databases": "DATABASES_URL",
	}
	for svc, v := range addrVars {
		addr := testinfra.FreeAddr(t)
		env[v] = addr
		if u, ok := urlVars[svc]; ok {
			env[u] = "http://" + addr
		}
	}
	env["EDGE_ADDR"] = testinfra.FreeAddr(t)
	env["EDGE_TLS_ADDR"] = testinfra.FreeAddr(t)
	// The zone's edge process answers /readyz there (the agent's /readyz waits for it).
	env["ZONE_EDGE_HEALTH_ADDR"] = testinfra.FreeAddr(t)
	env["GATEWAY_METRICS_ADDR"] = testinfra.FreeAddr(t)
	// The zone's database pooler on a port of the stack's own; the sandbox reaches that port.
	env["ZONE_POOLER_ADDR"] = testinfra.FreeAddr(t)
	env["ZONE_POOLER_PORT"] = env["ZONE_POOLER_ADDR"][strings.LastIndex(env["ZONE_POOLER_ADDR"], ":")+1:]
	// And its database host's (the agent's child) health server and folder.
	env["ZONE_DATABASES_HEALTH_ADDR"] = testinfra.FreeAddr(t)
	env["ZONE_DATABASES_DIR"] = databasesDir(t)
	env["ZONE_APPS_DIR"] = zoneAppsDir(t)
	env["BASE_URL"] = "http://" + env["GATEWAY_ADDR"]
	// The web console's origin (StartConsole serves it there): magic links and the device
	// flow point at it, and the gateway's CORS admits it.
	env["CONSOLE_ADDR"] = testinfra.FreeAddr(t)
	env["CONSOLE_URL"] = "http://" + env["CONSOLE_ADDR"]
	env["CORS_ORIGINS"] = env["CONSOLE_URL"]
	if opts.TwoZones {
		twoZoneSettings(env)
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	if opts.Replicas > 1 {
		replicaSettings(t, env)
	}
	s.Env = env
	s.Gateway = "http://" + env["GATEWAY_ADDR"]
	s.Edge = "http://" + env["EDGE_ADDR"]
	s.EdgeTLS = env["EDGE_TLS_ADDR"]

	for _, name := range startOrder {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			continue
		}
		// What bin/bootstrap does for make run, with a role of this test's own per service
		// and the broker users scripts/test.sh makes once per run.
		if name == "zoneagent" {
			s.creds[name] = s.zoneCredentials(t, dbURL, env["ZONE_ID"])
		} else {
			s.creds[name] = testinfra.ServiceCredentials(t, dbURL, name, env["ZONE_ID"])
		}
		if name == "deploys" {
			// deploys' account and the artifacts bucket (artifacts.go).
			for k, v := range s.deploysObjectStore(t) {
				s.creds[name][k] = v
			}
		}
		s.services = append(s.services, name)
		s.start(name)
	}
	t.Cleanup(s.stopAll)
	for _, name := range s.services {
		s.waitHealthy(name, addrVars[name])
	}
	s.Gateways = []string{s.Gateway}
	s.zones = []*Stack{s}
	if opts.TwoZones {
		s.startSecondZone(t, dbURL)
	}
	if opts.Replicas > 1 {
		s.startReplicas(t)
	}
	return s
}

// zoneCredentials are what bin/bootstrap writes to a zone agent's file: its own database and
// broker URLs, its provisioning role on the managed-database cluster, and the key its
// certificates are sealed with.
func (s *Stack) zoneCredentials(t testing.TB, dbURL, zone string) map[string]string {
	t.Helper()
	creds := testinfra.ServiceCredentials(t, dbURL, "zoneagent", zone)
	creds["ZONE_POSTGRES_ADMIN_URL"] = testinfra.ZoneProvisionerURL(t)
	creds["ZONE_TLS_STORAGE_KEY"] = tlsStorageKey()
	// And its own account and bucket in the object store (objectstore.go).
	for k, v := range s.zoneObjectStore(t, zone) {
		creds[k] = v
	}
	return creds
}

// startExtra runs process name of binary beside the stack's services, its settings already
// in s.creds[name], and waits until it is ready on addr.
func (s *Stack) startExtra(name, binary, addr string) {
	s.t.Helper()
	if s.extras == nil {
		s.extras = map[string]extraProcess{}
	}
	s.extras[name] = extraProcess{binary: binary, addr: addr}
	s.startBinary(name, binary)
	s.services = append(s.services, name)
	s.waitReadyAt(name, binary, addr)
}

// process is one running service and a channel closed once it has exited.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func (s *Stack) start(name string) { s.startBinary(name, name) }

// startBinary runs the built binary as the process called name (one binary may run twice).
func (s *Stack) startBinary(name, binary string) {
	s.t.Helper()
	logf, err := os.OpenFile(s.LogPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatalf("harness: log file: %v", err)
	}
	cmd := exec.Command(filepath.Join(s.bin, binary))
	cmd.Env = s.environ(name)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("harness: start %s: %v", name, err)
	}
	logf.Close()
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	s.procs[name] = p
}

// environ is service name's environment: the stack's settings and its own credentials, never
// the admin URLs (DATABASE_URL, AMQP_URL stay with the test) nor another service's. The
// zone agent serves no signed route, so it gets no signing key (as under scripts/run.sh).
func (s *Stack) environ(name string) []string {
	// Only what a service needs from the parent: tools and the home for Go's caches.
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range s.Env {
		if k == "DATABASE_URL" || k == "AMQP_URL" || (strings.HasPrefix(name, "zoneagent") && k == "GATEWAY_SIGNING_KEY") {
			continue
		}
		out = append(out, k+"="+s.redirected(v))
	}
	for k, v := range s.creds[name] {
		out = append(out, k+"="+s.redirected(v))
	}
	return out
}

// redirected is v with each Options.Redirect address in a URL's host ("@host:port/" or
// "//host:port/") replaced.
func (s *Stack) redirected(v string) string {
	for from, to := range s.redirect {
		v = strings.ReplaceAll(v, "@"+from+"/", "@"+to+"/")
		v = strings.ReplaceAll(v, "//"+from+"/", "//"+to+"/")
	}
	return v
}

// Credentials are service name's own database and broker URLs.
func (s *Stack) Credentials(name string) map[string]string { return s.creds[name] }

// LogPath is where a service's output goes.
func (s *Stack) LogPath(name string) string { return filepath.Join(s.LogDir, name+".log") }

// Logs returns everything every service has written so far.
func (s *Stack) Logs() map[string]string {
	out := map[string]string{}
	for _, name := range s.services {
		b, _ := os.ReadFile(s.LogPath(name))
		out[name] = string(b)
	}
	return out
}

// waitHealthy waits until the service answers as itself; every service but the gateway
// (which consumes nothing durable) must also be ready, its consumers' queues bound, so no
// event a test causes is published before the queue that should keep it exists.
func (s *Stack) waitHealthy(name, addrVar string) {
	s.t.Helper()
	s.waitReadyAt(name, name, s.Env[addrVar])
}

// waitReadyAt is waitHealthy for process name running binary and answering on addr.
func (s *Stack) waitReadyAt(name, binary, addr string) {
	s.t.Helper()
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.procs[name].exited:
			b, _ := os.ReadFile(s.LogPath(name))
			s.t.Fatalf("harness: %s exited at start; its log:\n%s", name, tail(string(b), 4000))
		default:
		}
		if s.answersAs(base+"/healthz", binary) && (binary == "gateway" || ok(base+"/readyz")) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(s.LogPath(name))
	s.t.Fatalf("harness: %s did not become ready on %s; its log:\n%s", name, base, tail(string(b), 4000))
}

// answersAs reports whether url names the service: a port another process took between the
// harness choosing it and the service binding it must not pass for the service.
func (s *Stack) answersAs(url, name string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var id struct {
		Service string `json:"service"`
	}
	return resp.StatusCode == 200 && json.NewDecoder(resp.Body).Decode(&id) == nil && id.Service == name
}

func ok(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// Stop ends one service (SIGTERM, then SIGKILL after 10s).
func (s *Stack) Stop(name string) { s.signal(name, syscall.SIGTERM) }

// Kill ends one service at once (SIGKILL), as a crash would.
func (s *Stack) Kill(name string) { s.signal(name, syscall.SIGKILL) }

// Restart starts a stopped or killed service again and waits until it is healthy.
func (s *Stack) Restart(name string) {
	s.t.Helper()
	if x, ok := s.extras[name]; ok {
		s.startBinary(name, x.binary)
		s.waitReadyAt(name, x.binary, x.addr)
		return
	}
	s.start(name)
	for svc, v := range map[string]string{"gateway": "GATEWAY_ADDR", "identity": "IDENTITY_ADDR", "billing": "BILLING_ADDR", "apps": "APPS_ADDR", "deploys": "DEPLOYS_ADDR", "logs": "LOGS_ADDR", "databases": "DATABASES_ADDR", "zoneagent": "ZONEAGENT_ADDR"} {
		if svc == name {
			s.waitHealthy(name, v)
		}
	}
}

func (s *Stack) signal(name string, sig syscall.Signal) {
	p := s.procs[name]
	if p == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// StopAll stops every service gracefully, the gateway first. A service that has stopped has
// written its last line, so what Logs reads next is all the stack will ever log.
func (s *Stack) StopAll() {
	for i := len(s.services) - 1; i >= 0; i-- {
		s.Stop(s.services[i])
	}
}

func (s *Stack) stopAll() {
	s.StopAll()
	if s.t.Failed() {
		for name, log := range s.Logs() {
			s.t.Logf("--- %s log (tail)\n%s", name, tail(log, 3000))
		}
	}
}

// Command runs one of the built binaries with the stack's environment (operator commands).
func (s *Stack) Command(name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Env = s.environ(name)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Hex is a short random hex string for unique names in a test.
func Hex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Email is a unique mail address for a test account.
func Email(prefix string) string {
	return fmt.Sprintf("%s-%s@example.test", strings.ToLower(prefix), Hex(4))
}

// zoneAppsDir is where the stack's zone agent keeps customers' source trees. Each app runs
// as a user of its own that must reach its folder, so unlike t.TempDir (mode 0700) this one
// is traversable; it goes when the test ends, after the stack has stopped.
func zoneAppsDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tori-zone-e2e-")
	if err != nil {
		t.Fatalf("harness: zone folder: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("harness: zone folder: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Pid is a running service's process id (a containment test asks its app to read the
// agent's /proc/<pid>/environ).
func (s *Stack) Pid(t testing.TB, name string) int {
	t.Helper()
	p, ok := s.procs[name]
	if !ok || p.cmd.Process == nil {
		t.Fatalf("harness: %s is not running", name)
	}
	return p.cmd.Process.Pid
}
