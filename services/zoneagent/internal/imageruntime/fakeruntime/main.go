// Command fakeruntime is FakeContainerRuntime: a test stand-in for docker/podman, which
// cannot run on the machine the tests run on. It implements the subset of the docker CLI
// that runner.CLI uses, keeping its "engine" in a state folder: $FAKE_CONTAINER_STATE, or
// the path written in the file next to its binary named <binary>.state (the zone runs its
// CLI with a fixed environment, which carries no such variable):
//
//	load -i TARBALL        loads a docker-archive tarball under its RepoTags, as docker
//	                       load does; the image's label tori.test/behaviour=crash makes its
//	                       service exit at once
//	network create --driver bridge --opt com.docker.network.bridge.name=IF NAME
//	                       records a network and its bridge interface (an existing name:
//	                       "already exists")
//	network rm NAME        forgets it; refused while a container is on it
//	run --rm … IMAGE ARGV  runs ARGV (none: exits 0) with the env-file's variables only
//	run -d … IMAGE         starts an HTTP server on the host port `-p 127.0.0.1:H:C`
//	                       publishes, answering the image, its network and the names (never
//	                       the values) of the variables it got, and prints a fresh
//	                       container id
//	rm -f NAME|ID          kills the container and forgets it
//	logs -f NAME|ID        streams the container's stdout and stderr until it stops
//	ps -a --format …       lists the containers' names
//
// Like an engine it refuses what it cannot honour: a network it does not hold, and the
// ones the zone must never ask for (`host`, and the shared default `bridge`; the fake fails
// so a test cannot miss it), `pull` and a `run` without `--pull never` (the zone's engine
// never dials a registry: the zone pulls and loads), an image not loaded, a published port
// on anything but 127.0.0.1, a volume whose host folder is missing, an unknown flag.
//
// Every invocation appends its argv to argv.log and the names of its environment to
// cliEnv.log, so a test can check what reached a command line and the CLI's environment,
// and every env-file read is recorded in envfiles.log with its mode.
package main

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var state string

func main() {
	if len(os.Args) > 5 && os.Args[1] == "__serve" {
		serve(os.Args[2], os.Args[3], os.Args[4], os.Args[5])
		return
	}
	state = os.Getenv("FAKE_CONTAINER_STATE")
	if state == "" {
		self, _ := os.Executable()
		b, _ := os.ReadFile(self + ".state")
		state = strings.TrimSpace(string(b))
	}
	if state == "" {
		fail(2, "FAKE_CONTAINER_STATE is not set and no <binary>.state names the state folder")
	}
	for _, d := range []string{"images", "containers", "logs", "networks"} {
		os.MkdirAll(filepath.Join(state, d), 0o700)
	}
	record("argv.log", os.Args[1:])
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	sort.Strings(names)
	record("cliEnv.log", names)
	if len(os.Args) < 2 {
		fail(2, "usage: fakeruntime load|network|run|rm|logs|ps …")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "pull":
		fail(1, "fakeruntime refuses pull: the zone's engine never dials a registry")
	case "load":
		if len(args) != 2 || args[0] != "-i" {
			fail(125, "usage: load -i TARBALL")
		}
		load(args[1])
	case "network":
		network(args)
	case "run":
		run(args)
	case "rm":
		remove(resolve(args[len(args)-1]))
	case "logs":
		logs(resolve(args[len(args)-1]))
	case "ps":
		entries, _ := os.ReadDir(filepath.Join(state, "containers"))
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), ".pid"); ok {
				fmt.Println(name)
			}
		}
	default:
		fail(2, "unknown command "+os.Args[1])
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "Error: "+msg)
	os.Exit(code)
}

// record appends one JSON line to a log of the state folder.
func record(file string, v any) {
	b, _ := json.Marshal(v)
	f, err := os.OpenFile(filepath.Join(state, file), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fail(2, err.Error())
	}
	f.Write(append(b, '\n'))
	f.Close()
}

func imageFile(image string) string {
	sum := sha256.Sum256([]byte(image))
	return filepath.Join(state, "images", hex.EncodeToString(sum[:8]))
}

func pidFile(name string) string { return filepath.Join(state, "containers", name+".pid") }

func idFile(name string) string { return filepath.Join(state, "containers", name+".id") }

// resolve turns a container reference (a name, or an id a `run -d` printed) into the name
// of the container it designates now, or "" when none: an id outlives its container, and
// a later container of the same name has a new id.
func resolve(ref string) string {
	if _, err := os.Stat(pidFile(ref)); err == nil {
		return ref
	}
	entries, _ := os.ReadDir(filepath.Join(state, "containers"))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".id"); ok {
			if b, _ := os.ReadFile(filepath.Join(state, "containers", e.Name())); string(b) == ref {
				return name
			}
		}
	}
	return ""
}

func logFile(name, stream string) string { return filepath.Join(state, "logs", name+"."+stream) }

// load reads a docker-archive tarball: manifest.json names the tags and the config file,
// whose labels are kept with the image.
func load(path string) {
	f, err := os.Open(path)
	if err != nil {
		fail(1, err.Error())
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(1, "invalid tar: "+err.Error())
		}
		if strings.HasSuffix(h.Name, ".json") || strings.HasPrefix(h.Name, "sha256:") {
			b, _ := io.ReadAll(tr)
			files[h.Name] = b
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) == 0 {
		fail(1, "no manifest.json in the archive")
	}
	var config struct {
		Config struct{ Labels map[string]string } `json:"config"`
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil {
		fail(1, "no image config in the archive")
	}
	labels, _ := json.Marshal(config.Config.Labels)
	for _, tag := range manifest[0].RepoTags {
		os.WriteFile(imageFile(tag), labels, 0o600)
		fmt.Println("Loaded image: " + tag)
	}
}

func networkFile(name string) string { return filepath.Join(state, "networks", name) }

// network creates or removes a network, remembering its bridge interface.
func network(args []string) {
	if len(args) < 2 {
		fail(125, "usage: network create|rm …")
	}
	name := args[len(args)-1]
	switch args[0] {
	case "create":
		bridge := ""
		for i := 1; i < len(args)-1; i++ {
			switch {
			case args[i] == "--driver" && i+1 < len(args)-1 && args[i+1] == "bridge":
				i++
			case args[i] == "--opt" && i+1 < len(args)-1 && strings.HasPrefix(args[i+1], "com.docker.network.bridge.name="):
				bridge = strings.TrimPrefix(args[i+1], "com.docker.network.bridge.name=")
				i++
			default:
				fail(125, "unknown flag: "+args[i])
			}
		}
		if bridge == "" || len(bridge) > 15 {
			fail(125, "fakeruntime: network create needs --opt com.docker.network.bridge.name=<at most 15 bytes>")
		}
		if name == "host" || name == "bridge" || name == "none" {
			fail(1, "network with name "+name+" already exists")
		}
		if _, err := os.Stat(networkFile(name)); err == nil {
			fail(1, "network with name "+name+" already exists")
		}
		os.WriteFile(networkFile(name), []byte(bridge), 0o600)
		fmt.Println(name)
	case "rm":
		if _, err := os.Stat(networkFile(name)); err != nil {
			fail(1, "Error: No such network: "+name)
		}
		entries, _ := os.ReadDir(filepath.Join(state, "containers"))
		for _, e := range entries {
			if c, ok := strings.CutSuffix(e.Name(), ".net"); ok && running(c) {
				if b, _ := os.ReadFile(filepath.Join(state, "containers", e.Name())); string(b) == name {
					fail(1, "error while removing network: network "+name+" has active endpoints")
				}
			}
		}
		os.Remove(networkFile(name))
		fmt.Println(name)
	default:
		fail(125, "unknown command network "+args[0])
	}
}

// options is a parsed `run` command line.
type options struct {
	detached, remove bool
	neverPull        bool
	name, envFile    string
	network          string
	env              []string // -e K=V
	publish          string   // -p 127.0.0.1:H:C: the host address the service listens on
	image            string
	argv             []string
}

// valued are the `run` flags that take a value; readOnly is the one boolean beside -d, --rm.
var valued = map[string]bool{"--name": true, "--network": true, "--env-file": true, "-e": true, "-p": true,
	"--memory": true, "--memory-swap": true, "--cpus": true, "--pids-limit": true, "--user": true,
	"--cap-drop": true, "--security-opt": true, "--tmpfs": true, "--volume": true, "--pull": true}

func parseRun(args []string) options {
	var o options
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d":
			o.detached = true
		case a == "--rm":
			o.remove = true
		case a == "--read-only":
		case valued[a]:
			if i+1 >= len(args) {
				fail(125, "flag needs an argument: "+a)
			}
			i++
			v := args[i]
			switch a {
			case "--name":
				o.name = v
			case "--env-file":
				o.envFile = v
			case "-e":
				o.env = append(o.env, v)
			case "--pull":
				o.neverPull = v == "never"
			case "--network":
				if v == "host" {
					fail(125, "fakeruntime refuses --network host: a container must have a network of its own")
				}
				if v == "bridge" || v == "default" {
					fail(125, "fakeruntime refuses --network "+v+": the shared default bridge joins every app's containers")
				}
				if _, err := os.Stat(networkFile(v)); err != nil {
					fail(125, "network "+v+" not found")
				}
				o.network = v
			case "-p":
				parts := strings.Split(v, ":")
				if len(parts) != 3 || parts[0] != "127.0.0.1" {
					fail(125, "fakeruntime publishes on 127.0.0.1:HOST:CONTAINER only, not "+v)
				}
				o.publish = parts[0] + ":" + parts[1]
			case "--volume":
				if host, _, _ := strings.Cut(v, ":"); !dirExists(host) {
					fail(125, "invalid mount config: bind source path does not exist: "+host)
				}
			}
		default:
			if strings.HasPrefix(a, "-") {
				fail(125, "unknown flag: "+a)
			}
			o.image, o.argv = a, args[i+1:]
			return o
		}
	}
	fail(125, "\"run\" requires at least 1 argument")
	return o
}

func dirExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// readEnvFile reads an env-file as docker does (KEY=VALUE lines, # comments) and records
// that it existed and with which mode.
func readEnvFile(path string) []string {
	info, err := os.Stat(path)
	if err != nil {
		fail(125, "open "+path+": no such file or directory")
	}
	record("envfiles.log", map[string]string{"path": path, "mode": fmt.Sprintf("%04o", info.Mode().Perm())})
	f, err := os.Open(path)
	if err != nil {
		fail(125, err.Error())
	}
	defer f.Close()
	var env []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t")
		if line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

func run(args []string) {
	o := parseRun(args)
	if !o.neverPull {
		fail(125, "fakeruntime needs --pull never: the zone's engine never dials a registry")
	}
	if o.network == "" {
		fail(125, "fakeruntime needs --network: every container is on its app's own network")
	}
	labels, err := os.ReadFile(imageFile(o.image))
	if err != nil {
		fail(125, "Unable to find image '"+o.image+"' locally (fakeruntime pulls nothing by itself)")
	}
	if o.name == "" {
		fail(125, "fakeruntime needs --name")
	}
	if _, err := os.Stat(pidFile(o.name)); err == nil {
		fail(125, "Conflict. The container name \"/"+o.name+"\" is already in use")
	}
	var env []string
	if o.envFile != "" {
		env = readEnvFile(o.envFile)
	}
	env = append(append(env, o.env...), "PATH="+os.Getenv("PATH"))
	if o.detached {
		if o.publish == "" {
			fail(125, "fakeruntime: a service container needs -p 127.0.0.1:HOST:CONTAINER")
		}
		var l map[string]string
		json.Unmarshal(labels, &l)
		startServer(o, env, l["tori.test/behaviour"])
		return
	}
	os.WriteFile(filepath.Join(state, "containers", o.name+".net"), []byte(o.network), 0o600)
	os.Exit(runToEnd(o, env))
}

// runToEnd runs the release command like a container: in a process group of its own, so
// that killing this CLI leaves it running until `rm -f` (as with a real engine).
func runToEnd(o options, env []string) int {
	if len(o.argv) == 0 {
		return 0
	}
	cmd := exec.Command(o.argv[0], o.argv[1:]...)
	cmd.Env = env
	// Through pipes, not the CLI's own descriptors: the caller's pipe closes when this CLI dies.
	cmd.Stdout, cmd.Stderr = struct{ io.Writer }{os.Stdout}, struct{ io.Writer }{os.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fail(127, err.Error())
	}
	os.WriteFile(pidFile(o.name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	err := cmd.Wait()
	os.Remove(pidFile(o.name))
	os.Remove(filepath.Join(state, "containers", o.name+".net"))
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		return 137
	}
	return 0
}

func startServer(o options, env []string, behaviour string) {
	self, _ := os.Executable()
	// The server stands for the engine's port forwarding too: it listens on the published
	// host address, while the container's $PORT stays what -e set.
	cmd := exec.Command(self, "__serve", o.image, o.publish, o.network, behaviour)
	cmd.Env = env
	out, _ := os.Create(logFile(o.name, "out"))
	errf, _ := os.Create(logFile(o.name, "err"))
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fail(125, err.Error())
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d", o.name, cmd.Process.Pid, time.Now().UnixNano())))
	id := hex.EncodeToString(sum[:])
	os.WriteFile(idFile(o.name), []byte(id), 0o600)
	os.WriteFile(pidFile(o.name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	os.WriteFile(filepath.Join(state, "containers", o.name+".net"), []byte(o.network), 0o600)
	fmt.Println(id)
}

// serve is the "image" of a service container.
func serve(image, listen, network, behaviour string) {
	if behaviour == "crash" {
		fmt.Fprintln(os.Stderr, "crashing as asked")
		os.Exit(1)
	}
	var names []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		names = append(names, k)
		if k != "PATH" && k != "PORT" {
			fmt.Printf("started with %s=%s\n", k, v) // for the agent to redact
		}
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "listening on "+os.Getenv("PORT")+" (published at "+listen+")")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("request %s\n", r.URL.Path)
		fmt.Fprintf(w, "image=%s network=%s env=%s port=%s", image, network, strings.Join(names, ","), os.Getenv("PORT"))
	})
	if err := http.ListenAndServe(listen, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func remove(name string) {
	b, err := os.ReadFile(pidFile(name))
	if name == "" || err != nil {
		fail(1, "No such container: "+os.Args[len(os.Args)-1])
	}
	if pid, err := strconv.Atoi(string(b)); err == nil {
		syscall.Kill(-pid, syscall.SIGKILL) // its group: a release's shell and its children
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, f := range []string{pidFile(name), idFile(name), logFile(name, "out"), logFile(name, "err"), filepath.Join(state, "containers", name+".net")} {
		os.Remove(f) // a follower keeps reading what it has open
	}
	fmt.Println(name)
}

// running tells whether a container's process still runs (a zombie does not).
func running(name string) bool {
	b, err := os.ReadFile(pidFile(name))
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func logs(name string) {
	out, err1 := os.Open(logFile(name, "out"))
	errf, err2 := os.Open(logFile(name, "err"))
	if name == "" || err1 != nil || err2 != nil {
		fail(1, "No such container: "+os.Args[len(os.Args)-1])
	}
	id, _ := os.ReadFile(idFile(name))
	for {
		// Following one container: a later one under the same name is another.
		now, _ := os.ReadFile(idFile(name))
		alive := running(name) && string(now) == string(id)
		io.Copy(os.Stdout, out)
		io.Copy(os.Stderr, errf)
		if !alive {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
