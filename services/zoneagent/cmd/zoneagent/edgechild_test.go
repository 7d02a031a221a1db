package main

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// The edge's environment is its own settings and nothing of the agent's other secrets.
func TestEdgeEnvKeepsTheAgentsOtherSecrets(t *testing.T) {
	env := edgeEnv(map[string]string{
		"EDGE_ADDR": "127.0.0.1:1", "ZONEAGENT_DATABASE_URL": "postgres://zone", "ZONE_TLS_STORAGE_KEY": "k",
		"ZONEAGENT_AMQP_URL": "amqp://secret", "ZONE_POSTGRES_ADMIN_URL": "postgres://admin", "GATEWAY_SIGNING_KEY": "s",
		"PATH": "/usr/bin", "GOMAXPROCS": "2", "ZONE_TLS_DNS01_TOKEN": "t", "PREVIEWS_DOMAIN": "preview.example.com",
	})
	slices.Sort(env)
	want := []string{"EDGE_ADDR=127.0.0.1:1", "GOMAXPROCS=2", "PATH=/usr/bin", "PREVIEWS_DOMAIN=preview.example.com", "ZONEAGENT_DATABASE_URL=postgres://zone", "ZONE_TLS_DNS01_TOKEN=t", "ZONE_TLS_STORAGE_KEY=k"}
	if !slices.Equal(env, want) {
		t.Fatalf("edge env %q, want %q", env, want)
	}
}

// The edge's exit stops the agent with an error naming it; the agent's stop ends the edge
// and is no error.
func TestEdgeExitStopsTheAgent(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	err := superviseEdge(context.Background(), cmd, cmd.Process.Pid, exited, time.Second, log)
	if err == nil || !strings.Contains(err.Error(), "the edge process") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("edge exit: %v", err)
	}

	cmd = exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if err := superviseEdge(ctx, cmd, cmd.Process.Pid, exited, time.Second, log); err != nil {
		t.Fatalf("agent stop: %v", err)
	}
	if time.Since(t0) > 5*time.Second || cmd.ProcessState == nil {
		t.Fatal("the edge was not stopped with the agent")
	}
}
