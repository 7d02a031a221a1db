package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"tori.dev/pkg/pgstore"
)

// stackServices are the processes the logs route needs behind the gateway, in start order:
// identity answers the gateway's token checks, billing the plans, apps creates the app the
// logs service learns of, and the gateway comes last.
var stackServices = []string{"identity", "billing", "apps", "logs", "gateway"}

// stack is the control plane run as real processes, as `make run` runs it, on spare ports,
// against the scratch database and a bus namespace of its own, so the read is measured
// through the very gateway customers use.
type stack struct {
	bin     string // folder holding the service binaries
	work    string // temporary folder: binaries (when built here), DATA_DIR, process logs
	dataDir string
	env     map[string]string
	gateway string // http://host:port
	logs    string // http://host:port of the logs service itself
	key     string // GATEWAY_SIGNING_KEY
	procs   []*process
	// profiles are the profile servers' addresses by service (-profile): gateway and logs.
	profiles map[string]string
}

// process is one running service binary.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// startStack builds (or takes from o.binDir) the binaries of services, starts them with env
// added to (and overriding) their common environment, and waits until each is ready. On
// error whatever was started is stopped again.
func startStack(ctx context.Context, db *scratch, o options, services []string, env map[string]string) (*stack, error) {
	work, err := os.MkdirTemp("", "logs-bench-")
	if err != nil {
		return nil, err
	}
	s := &stack{bin: o.binDir, work: work, dataDir: filepath.Join(work, "data")}
	if s.bin == "" {
		s.bin = filepath.Join(work, "bin")
		if err := buildBinaries(ctx, s.bin, services); err != nil {
			s.stop(false)
			return nil, err
		}
	}
	if err := s.configure(db, o, services); err != nil {
		s.stop(false)
		return nil, err
	}
	for k, v := range env {
		s.env[k] = v
	}
	for _, name := range services {
		if err := s.start(name); err != nil {
			s.stop(true)
			return nil, err
		}
	}
	for _, p := range s.procs {
		if err := s.waitHealthy(ctx, p); err != nil {
			s.stop(true)
			return nil, err
		}
	}
	return s, nil
}

// buildBinaries builds the services from this workspace, so the benchmark never measures a
// stale binary in ./bin against the schema it seeds.
func buildBinaries(ctx context.Context, dir string, services []string) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return fmt.Errorf("go env GOWORK: %w", err)
	}
	gowork := strings.TrimSpace(string(out))
	if gowork == "" || gowork == "off" {
		return errors.New("no go.work in sight: run from inside the repository, or pass -bin")
	}
	root := filepath.Dir(gowork)
	for _, name := range services {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = filepath.Join(root, "services", name)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// configure sets the environment every service gets (the variables of
// scripts/bench-gateway.sh): mail goes to files under DATA_DIR, the per-address sign-in bucket
// is out of the way, and queues are classic and expire, so the broker forgets them.
func (s *stack) configure(db *scratch, o options, services []string) error {
	key := make([]byte, 32)
	ns := make([]byte, 4)
	_, _ = rand.Read(key)
	_, _ = rand.Read(ns)
	s.key = hex.EncodeToString(key)
	s.env = map[string]string{
		"DATABASE_URL":         db.url,
		"AMQP_URL":             o.amqpURL,
		"BUS_NAMESPACE":        "logsbench_" + hex.EncodeToString(ns) + ".",
		"BUS_QUEUE_TYPE":       "classic",
		"BUS_QUEUE_EXPIRES":    "10m",
		"GATEWAY_SIGNING_KEY":  s.key,
		"DATA_DIR":             s.dataDir,
		"AUTH_LIMIT_PER_15MIN": "100000",
		"LOG_LEVEL":            "warn",
	}
	// What bin/bootstrap does: each service its own role on the scratch database and its own
	// broker user (the test users, with the permissions bootstrap gives the real ones).
	for _, name := range services {
		schema := name
		if name == "zoneagent" {
			schema = "zoneagent_local"
		}
		svc := pgstore.Service{Schema: schema, Role: "tori_" + schema}
		if err := pgstore.EnsureService(context.Background(), db.url, svc); err != nil {
			return err
		}
		own, err := pgstore.ServiceURL(db.url, svc)
		if err != nil {
			return err
		}
		s.env[strings.ToUpper(name)+"_DATABASE_URL"] = own
		broker, err := principalURL(context.Background(), o.amqpURL, principalOf(name))
		if err != nil {
			return err
		}
		s.env[strings.ToUpper(name)+"_AMQP_URL"] = broker
	}
	for _, name := range services {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		upper := strings.ToUpper(name)
		s.env[upper+"_ADDR"] = addr
		if name != "gateway" {
			s.env[upper+"_URL"] = "http://" + addr
		}
	}
	if o.profileDir != "" {
		s.profiles = map[string]string{}
		for _, name := range []string{"gateway", "logs"} {
			addr, err := freeAddr()
			if err != nil {
				return err
			}
			s.profiles[name] = addr
		}
	}
	s.gateway = "http://" + s.env["GATEWAY_ADDR"]
	s.logs = s.env["LOGS_URL"]
	s.env["BASE_URL"] = s.gateway
	return os.MkdirAll(s.dataDir, 0o700)
}

// environ is the services' whole environment: only PATH and HOME come from ours, so a
// developer's SMTP_URL or *_ADDR cannot leak in.
func (s *stack) environ() []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	return out
}

func (s *stack) start(name string) error {
	p := &process{name: name, log: filepath.Join(s.work, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		return err
	}
	defer logf.Close()
	p.cmd = exec.Command(filepath.Join(s.bin, name))
	p.cmd.Env = s.environ()
	if addr := s.profiles[name]; addr != "" {
		p.cmd.Env = append(p.cmd.Env, "PROFILE_ADDR="+addr)
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	// A group of its own, so a terminal's Ctrl-C reaches the benchmark alone and the services
	// are stopped in order; the parent-death signal ends them should the benchmark be killed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	s.procs = append(s.procs, p)
	return nil
}

func (s *stack) waitHealthy(ctx context.Context, p *process) error {
	// Ready means the service's consumers' queues are bound; the gateway consumes nothing
	// durable and is ready once it answers.
	path := "/readyz"
	if p.name == "gateway" {
		path = "/healthz"
	}
	url := "http://" + s.env[strings.ToUpper(p.name)+"_ADDR"] + path
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited at start", p.name)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer %s within 60 s", p.name, url)
}

// command runs one of the binaries as an operator would, with the services' environment.
func (s *stack) command(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Env = s.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// stop ends the services in reverse order (SIGTERM, SIGKILL after 10 s) and removes the
// temporary folder; with showLogs it first prints the tail of every service's log, which is
// where the reason of a failure is.
func (s *stack) stop(showLogs bool) {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop()
	}
	if showLogs {
		for _, p := range s.procs {
			b, _ := os.ReadFile(p.log)
			fmt.Fprintf(os.Stderr, "--- %s log (tail)\n%s\n", p.name, tail(string(b), 2000))
		}
	}
	_ = os.RemoveAll(s.work)
}

func (p *process) stop() {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
	}
}

// freeAddr returns a loopback address nothing listens on at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
