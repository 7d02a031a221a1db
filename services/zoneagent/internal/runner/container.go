package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ContainerRuntime is what the zone needs of a container engine to run image revisions.
// CLI is the real one (docker or podman); the tests drive it with a named fake CLI
// (fakeruntime), since no engine runs on the machine the tests run on.
type ContainerRuntime interface {
	// Pull fetches an image; its progress goes to out.
	Pull(ctx context.Context, image string, out io.Writer) error
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

// Container is one container to run.
type Container struct {
	Name  string
	Image string
	Args  []string          // the command; empty runs the image's own
	Env   map[string]string // written to an env-file, never onto the command line
	Port  int               // PORT, which the service listens on (host network); 0: none
	// Resource limits; zero leaves the engine's default.
	MemoryBytes int64
	CPUs        float64
	PidsLimit   int64
}

// CLI drives a docker-compatible container CLI (docker, podman) named by ZONE_IMAGE_RUNTIME.
type CLI struct {
	Path string
	// EnvDir is where private env-file folders are made; empty: the system temp dir.
	EnvDir string
}

var _ ContainerRuntime = CLI{}

func (c CLI) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path, args...)
	// A CLI that leaves a child holding its output pipes must not block Wait for ever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Pull runs `<rt> pull <image>`; the digest in the reference pins what is fetched.
func (c CLI) Pull(ctx context.Context, image string, out io.Writer) error {
	cmd := c.command(ctx, "pull", image)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
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
	envFile, remove, err := writeEnvFile(c.EnvDir, ct.Env)
	if err != nil {
		return err
	}
	defer remove()
	cmd := c.command(ctx, runArgs(ct, detached, envFile)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// runArgs is the `run` command line: host network (the service listens on 127.0.0.1:$PORT
// like a local process), the env-file, PORT, the resource limits, the image and its command.
func runArgs(ct Container, detached bool, envFile string) []string {
	args := []string{"run", "--rm"}
	if detached {
		args = []string{"run", "-d"}
	}
	args = append(args, "--name", ct.Name, "--network", "host", "--env-file", envFile)
	if ct.Port > 0 {
		args = append(args, "-e", "PORT="+strconv.Itoa(ct.Port))
	}
	if ct.MemoryBytes > 0 {
		args = append(args, "--memory", strconv.FormatInt(ct.MemoryBytes, 10))
	}
	if ct.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(ct.CPUs, 'f', -1, 64))
	}
	if ct.PidsLimit > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(ct.PidsLimit, 10))
	}
	args = append(args, ct.Image)
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
