package main

import (
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
	if o.detached && o.publish == "" && len(o.argv) > 0 {
		startCommand(o, env) // a process other than web: its own command, no port
		return
	}
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

// startCommand runs a detached container's own command (a worker's) with its output in the
// container's log files, as startServer does for a service.
func startCommand(o options, env []string) {
	cmd := exec.Command(o.argv[0], o.argv[1:]...)
	cmd.Env = env
	out, _ := os.Create(logFile(o.name, "out"))
	errf, _ := os.Create(logFile(o.name, "err"))
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fail(127, err.Error())
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d", o.name, cmd.Process.Pid, time.Now().UnixNano())))
	id := hex.EncodeToString(sum[:])
	os.WriteFile(idFile(o.name), []byte(id), 0o600)
	os.WriteFile(pidFile(o.name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	os.WriteFile(filepath.Join(state, "containers", o.name+".net"), []byte(o.network), 0o600)
	fmt.Println(id)
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
