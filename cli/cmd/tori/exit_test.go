package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// silent accepts connections and never answers on them: a hung server.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

func cliEnv(t *testing.T, api string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"TORI_API_URL=" + api, "TORI_TOKEN=svc_test", "TORI_NO_BROWSER=1"}
}

// The built binary, at its real timeout, against a server that never answers: it exits 1
// within 35 s, naming the URL it asked. (A deadline for a hang, not a timing target.)
func TestNoAnswerExitsWithin35sNamingTheURL(t *testing.T) {
	api := silent(t)
	cmd := exec.Command(toriBin, "apps", "list")
	cmd.Env = cliEnv(t, api)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit %v, want 1; stderr %q", err, stderr.String())
		}
	case <-time.After(35 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still waiting after 35 s; stderr %q", stderr.String())
	}
	if !strings.Contains(stderr.String(), api+"/api/apps") {
		t.Fatalf("stderr %q does not name %s/api/apps", stderr.String(), api)
	}
}

// Ctrl-C (SIGINT) while tori waits: exit 130, at once.
func TestInterruptExits130(t *testing.T) {
	cmd := exec.Command(toriBin, "apps", "list")
	cmd.Env = cliEnv(t, silent(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // inside the request
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "Interrupted") {
		t.Fatalf("exit %v stderr %q, want 130 and Interrupted", err, stderr.String())
	}
}

// Usage mistakes exit 2 from the binary too, before any request.
func TestUsageExits2(t *testing.T) {
	for _, args := range [][]string{{"deplyo"}, {"apps", "list", "--nope"}, {"tokens", "list", "-a", "x"}} {
		cmd := exec.Command(toriBin, args...)
		cmd.Env = cliEnv(t, "http://127.0.0.1:9")
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("tori %v: %v, want exit 2", args, err)
		}
	}
}
