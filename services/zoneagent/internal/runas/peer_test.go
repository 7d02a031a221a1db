package runas

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// The peer of a Unix connection is the process that connected: its pid and uid.
func TestPeerOfIsTheConnectingProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p, err := PeerOf(conn)
	if err != nil {
		t.Fatal(err)
	}
	if int(p.PID) != os.Getpid() || int(p.UID) != os.Getuid() {
		t.Fatalf("peer %+v, want pid %d uid %d", p, os.Getpid(), os.Getuid())
	}
}

// A child whose parent is not the agent that started it says so rather than running on.
func TestDieWithParentRefusesAnotherParent(t *testing.T) {
	if err := DieWithParent(os.Getppid() + 1); !errors.Is(err, ErrOrphan) {
		t.Fatalf("another parent: %v, want ErrOrphan", err)
	}
	if err := DieWithParent(os.Getppid()); err != nil {
		t.Fatalf("the real parent: %v", err)
	}
}
