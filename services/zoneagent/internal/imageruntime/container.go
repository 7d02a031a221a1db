// Package imageruntime runs image revisions' containers through a docker or podman CLI:
// the runtime's port, its CLI adapter, registry pulls, each app's container network and
// its firewall, and (in fakeruntime) the named test stand-in for the engine.
package imageruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// ContainerRuntime is what the zone needs of a container engine to run image revisions.
// CLI is the real one (docker or podman); the tests drive it with a named fake CLI
// (fakeruntime), since no engine runs on the machine the tests run on.
type ContainerRuntime interface {
	// Pull fetches an image and loads it into the engine under LocalImage(image); its
	// progress goes to out. The engine itself never dials a registry.
	Pull(ctx context.Context, image string, out io.Writer) error
	// EnsureNetwork makes an app's own network when it does not exist yet.
	EnsureNetwork(ctx context.Context, n AppNetwork) error
	// RemoveNetwork removes an app's network; one that does not exist is not an error.
	RemoveNetwork(ctx context.Context, n AppNetwork) error
	// Run runs a container to completion and removes it (the release Job); a non-zero exit
	// is an *exec.ExitError carrying the container's status.
	Run(ctx context.Context, c Container, out io.Writer) error
	// RunDetached starts a long-running container (the service) and returns its id once it
	// runs. The id, unlike the name, is never reused, so stopping one container can never
	// remove the next one started under the same name.
	RunDetached(ctx context.Context, c Container) (id string, err error)
	// Remove kills and removes a container by name or id; one that does not exist is not
	// an error.
	Remove(ctx context.Context, ref string) error
	// Logs follows a container's output (by name or id) until it stops or ctx ends.
	Logs(ctx context.Context, ref string, stdout, stderr io.Writer) error
	// List names every container, running or not.
	List(ctx context.Context) ([]string, error)
}

// Container is one container to run. Every container of an app gets the sandbox's promise:
// a network of its own, the app's uid, no capabilities, no_new_privs, limits, and a
// read-only root with one writable folder and a private /tmp.
type Container struct {
	Name  string
	Image string // as loaded into the engine: LocalImage of the deploy's reference
	// Network is the app's own network (AppNetwork.Name); never the host's nor the engine's
	// shared default bridge.
	Network string
	Args    []string          // the command; empty runs the image's own
	Env     map[string]string // written to an env-file, never onto the command line
	// Port is the host port, on 127.0.0.1 only, that the edge reaches the container's
	// ContainerPort ($PORT inside) through; 0: none (the release Job).
	Port int
	// UID and GID the container's processes run as: the app's own, never root.
	UID, GID uint32
	// Volume is the host folder mounted writable at AppVolume, owned by UID.
	Volume string
	// Resource limits; each is required.
	MemoryBytes int64
	CPUs        float64
	PidsLimit   int64
	TmpBytes    int64 // the size of the tmpfs at /tmp
}

const (
	// ContainerPort is $PORT inside every service container: the host port it is published
	// on differs per container, the app need not know it.
	ContainerPort = 8080
	// AppVolume is where a container's one writable folder is mounted; the rest of its root
	// is read-only, /tmp aside.
	AppVolume = "/data"
)

// ErrUnconfined refuses a container that would run without part of the sandbox.
var ErrUnconfined = errors.New("refusing to run a container without its network, user, volume and limits")

func (ct Container) check() error {
	if ct.UID == 0 || ct.GID == 0 || ct.Volume == "" || ct.MemoryBytes <= 0 || ct.CPUs <= 0 || ct.PidsLimit <= 0 || ct.TmpBytes <= 0 ||
		!strings.HasPrefix(ct.Network, appNetworkPrefix) {
		return fmt.Errorf("%w: %s", ErrUnconfined, ct.Name)
	}
	return nil
}

// CLI drives a docker-compatible container CLI (docker, podman) named by ZONE_IMAGE_RUNTIME.
type CLI struct {
	Path string
	// EnvDir is where private env-file folders and image tarballs are made; empty: the
	// system temp dir.
	EnvDir string
	// Env is the CLI's whole environment; nil: RuntimeEnv of the agent's.
	Env []string
	// Registry fetches images; the engine only loads them.
	Registry RegistryPuller
}

var _ ContainerRuntime = CLI{}

// RuntimeEnvKeys are what a docker or podman CLI needs of the agent's environment to find
// its engine. Nothing else of it (the agent's secrets) reaches the CLI.
var RuntimeEnvKeys = []string{"HOME", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG",
	"DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "CONTAINER_HOST", "CONTAINER_CONNECTION", "CONTAINERS_CONF"}

// RuntimeEnv is the fixed environment the runtime's CLI runs with: a PATH of the system's
// folders and, from getenv, only the variables that locate the engine.
func RuntimeEnv(getenv func(string) string) []string {
	env := []string{"PATH=" + sandbox.BasePath}
	for _, k := range RuntimeEnvKeys {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (c CLI) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path, args...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = RuntimeEnv(os.Getenv)
	}
	// A CLI that leaves a child holding its output pipes must not block Wait for ever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Pull fetches the image with the zone's own registry client (RegistryPuller: public
// addresses only, the digest verified) into a private tarball, then `<rt> load -i` it, so
// the engine never dials a registry. The tarball is removed once loaded.
func (c CLI) Pull(ctx context.Context, image string, out io.Writer) error {
	dir, err := os.MkdirTemp(c.EnvDir, "tori-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path, err := c.Registry.Fetch(ctx, image, dir, out)
	if err != nil {
		return err
	}
	cmd := c.command(ctx, "load", "-i", path)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s load: %w", filepath.Base(c.Path), err)
	}
	return nil
}

// EnsureNetwork runs `<rt> network create` for the app's network, its bridge named
// n.Bridge so the zone's forward rules (ContainerFirewall) know its traffic; one that
// exists already is kept.
func (c CLI) EnsureNetwork(ctx context.Context, n AppNetwork) error {
	args := []string{"network", "create", "--driver", "bridge"}
	if strings.Contains(filepath.Base(c.Path), "podman") {
		args = append(args, "--interface-name", n.Bridge)
	} else {
		args = append(args, "--opt", "com.docker.network.bridge.name="+n.Bridge)
	}
	out, err := c.command(ctx, append(args, n.Name)...).CombinedOutput()
	if err != nil && !strings.Contains(strings.ToLower(string(out)), "already exists") {
		return fmt.Errorf("%s network create %s: %w: %s", c.Path, n.Name, err, firstLine(string(out)))
	}
	return nil
}

// RemoveNetwork runs `<rt> network rm <name>`.
func (c CLI) RemoveNetwork(ctx context.Context, n AppNetwork) error {
	out, err := c.command(ctx, "network", "rm", n.Name).CombinedOutput()
	if err != nil && !strings.Contains(strings.ToLower(string(out)), "not found") && !strings.Contains(strings.ToLower(string(out)), "no such network") {
		return fmt.Errorf("%s network rm %s: %w: %s", c.Path, n.Name, err, firstLine(string(out)))
	}
	return nil
}

// Run runs `<rt> run --rm …` in the foreground.
func (c CLI) Run(ctx context.Context, ct Container, out io.Writer) error {
	return c.run(ctx, ct, false, out, out)
}

// RunDetached runs `<rt> run -d …`, which prints the new container's id; the engine's
// complaint, if any, becomes the error.
func (c CLI) RunDetached(ctx context.Context, ct Container) (string, error) {
	var id, msg bytes.Buffer
	if err := c.run(ctx, ct, true, &id, &msg); err != nil {
		return "", fmt.Errorf("%s run: %w: %s", c.Path, err, firstLine(msg.String()))
	}
	// The id is the last line: docker may print pull progress before it.
	lines := strings.Fields(id.String())
	if len(lines) == 0 {
		return "", fmt.Errorf("%s run printed no container id", c.Path)
	}
	return lines[len(lines)-1], nil
}

// run writes the environment to a private env-file that lives only as long as the `run`
// command: values never appear on a command line, where any user could read them in ps.
func (c CLI) run(ctx context.Context, ct Container, detached bool, stdout, stderr io.Writer) error {
	if err := ct.check(); err != nil {
		return err
	}
	envFile, remove, err := writeEnvFile(c.EnvDir, ct.Env)
	if err != nil {
		return err
	}
	defer remove()
	cmd := c.command(ctx, runArgs(ct, detached, envFile)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// runArgs is the `run` command line. The image is the one Pull loaded (`--pull never`: the
// engine dials no registry). The container gets a network namespace of its own on the
// app's own network (never the host's: it would reach every port on the host's loopback;
// never the shared default bridge: it would reach other apps' containers), reached only
// through 127.0.0.1:<Port> → $PORT; the app's uid; no capabilities and no_new_privs, so
// no setuid binary of the image gains any; a read-only root with one writable folder and a
// sized tmpfs /tmp; memory (swap included), CPU and process limits; then the image and its
// command.
func runArgs(ct Container, detached bool, envFile string) []string {
	args := []string{"run", "--rm"}
	if detached {
		args = []string{"run", "-d"}
	}
	args = append(args, "--name", ct.Name,
		"--pull", "never",
		"--network", ct.Network,
		"--user", fmt.Sprintf("%d:%d", ct.UID, ct.GID),
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--read-only",
		"--volume", ct.Volume+":"+AppVolume+":rw",
		"--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777,size="+strconv.FormatInt(ct.TmpBytes, 10),
		"--env-file", envFile)
	if ct.Port > 0 {
		args = append(args, "-e", "PORT="+strconv.Itoa(ContainerPort),
			"-p", "127.0.0.1:"+strconv.Itoa(ct.Port)+":"+strconv.Itoa(ContainerPort))
	}
	mem := strconv.FormatInt(ct.MemoryBytes, 10)
	args = append(args, "--memory", mem, "--memory-swap", mem,
		"--cpus", strconv.FormatFloat(ct.CPUs, 'f', -1, 64),
		"--pids-limit", strconv.FormatInt(ct.PidsLimit, 10),
		ct.Image)
	return append(args, ct.Args...)
}

// Remove runs `<rt> rm -f <name or id>`.
func (c CLI) Remove(ctx context.Context, ref string) error {
	out, err := c.command(ctx, "rm", "-f", ref).CombinedOutput()
	if err != nil && !strings.Contains(strings.ToLower(string(out)), "no such container") {
		return fmt.Errorf("%s rm -f %s: %w: %s", c.Path, ref, err, firstLine(string(out)))
	}
	return nil
}

// Logs runs `<rt> logs -f <name or id>`, which ends when the container stops.
func (c CLI) Logs(ctx context.Context, ref string, stdout, stderr io.Writer) error {
	cmd := c.command(ctx, "logs", "-f", ref)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// List runs `<rt> ps -a --format {{.Names}}`.
func (c CLI) List(ctx context.Context) ([]string, error) {
	out, err := c.command(ctx, "ps", "-a", "--format", "{{.Names}}").Output()
	if err != nil {
		return nil, fmt.Errorf("%s ps: %w", c.Path, err)
	}
	return strings.Fields(string(out)), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
