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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
