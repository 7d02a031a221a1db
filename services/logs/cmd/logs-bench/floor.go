package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The floor: what any design that answers the page after reading it pays on this machine
// besides the statement. Two helper processes, this same binary in another role: a bare
// server that answers every request with the page's exact bytes, as the logs service would
// but with no query and no work (the same server library), and a bare TCP relay in front of
// it, a hop with no HTTP and no work. Reading them next to the three real paths shows how
// far the real ones are from the least they could cost.

// floorRoleEnv, when set, makes this binary one of the floor's helpers.
const (
	floorRoleEnv     = "LOGS_BENCH_FLOOR_ROLE"
	floorPageEnv     = "LOGS_BENCH_FLOOR_PAGE"     // serve: file with the page's bytes
	floorUpstreamEnv = "LOGS_BENCH_FLOOR_UPSTREAM" // relay: host:port to relay to
)

// runFloorRole runs the helper the environment names and reports whether it did.
func runFloorRole() (bool, error) {
	switch os.Getenv(floorRoleEnv) {
	case "":
		return false, nil
	case "serve":
		return true, serveBarePage(os.Getenv(floorPageEnv))
	case "relay":
		return true, relayBare(os.Getenv(floorUpstreamEnv))
	default:
		return true, fmt.Errorf("unknown %s %q", floorRoleEnv, os.Getenv(floorRoleEnv))
	}
}

// serveBarePage answers every GET with the bytes in file, as JSON.
func serveBarePage(file string) error {
	page, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ln, err := listenAndTell()
	if err != nil {
		return err
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/*", func(c *fiber.Ctx) error {
		c.Response().SetBody(page)
		c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
		return nil
	})
	return app.Listener(ln)
}

// relayBare copies bytes both ways between each connection and upstream.
func relayBare(upstream string) error {
	ln, err := listenAndTell()
	if err != nil {
		return err
	}
	for {
		down, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer down.Close()
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, down); _ = up.Close() }()
			_, _ = io.Copy(down, up)
		}()
	}
}

// listenAndTell listens on a spare loopback port and prints its address as the first line
// of stdout, which is how the parent learns it.
func listenAndTell() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fmt.Println(ln.Addr().String())
	return ln, nil
}

// floor is the two helpers, running.
type floor struct {
	bare, relayed *pageReader
	procs         []*exec.Cmd
	dir           string
}

// startFloor starts the helpers for page, read at path.
func startFloor(ctx context.Context, page []byte, path string) (*floor, error) {
	dir, err := os.MkdirTemp("", "logs-bench-floor-")
	if err != nil {
		return nil, err
	}
	f := &floor{dir: dir}
	file := filepath.Join(dir, "page.json")
	if err := os.WriteFile(file, page, 0o600); err != nil {
		f.stop()
		return nil, err
	}
	bare, err := f.start(ctx, "serve", floorPageEnv+"="+file)
	if err != nil {
		f.stop()
		return nil, err
	}
	relayed, err := f.start(ctx, "relay", floorUpstreamEnv+"="+bare)
	if err != nil {
		f.stop()
		return nil, err
	}
	noAuth := func(*http.Request, string) {}
	f.bare = newPageReader("http://"+bare, path, noAuth)
	f.relayed = newPageReader("http://"+relayed, path, noAuth)
	return f, nil
}

// start runs this binary in role and returns the address it listens on.
func (f *floor) start(ctx context.Context, role string, env ...string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(append(os.Environ(), floorRoleEnv+"="+role), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	f.procs = append(f.procs, cmd)
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("floor %s: no address: %w", role, err)
	}
	addr = strings.TrimSpace(addr)
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", errors.New("floor " + role + ": bad address " + addr)
	}
	return addr, nil
}

func (f *floor) stop() {
	for _, p := range f.procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	_ = os.RemoveAll(f.dir)
}
