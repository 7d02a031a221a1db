package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
