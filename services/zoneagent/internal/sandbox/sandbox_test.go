package sandbox

import (
	"context"
	"sync"
	"testing"
)

// The sandbox's tests use a zone of their own (its cgroups and nftables table) and uids far
// from the agent's default range and from the supervisor's tests (which run at the same
// time under go test ./...).
const (
	testZone    = "sandboxtest"
	testUIDBase = 320000
)

var (
	sandboxOnce sync.Once
	sandboxMade Sandbox
)

// testSandbox is the real sandbox, made once per test binary. These tests run as root on
// the project's CI hosts with bubblewrap, passt and nftables installed by
// scripts/ensure-services.sh: a host without them fails here, never skips.
func testSandbox(t *testing.T) Sandbox {
	t.Helper()
	sandboxOnce.Do(func() {
		sandboxMade = NewSandbox(context.Background(), SandboxConfig{
			Zone: testZone, Bwrap: "bwrap", Pasta: "pasta", Nft: "nft", CgroupMount: "/sys/fs/cgroup",
			UIDBase: testUIDBase, UIDCount: 1000, MemoryBytes: 1 << 30, MaxProcesses: 256, MaxOpenFiles: 1024,
			DiskBytes: 64 << 20, PoolerPort: 6432,
		})
	})
	if sandboxMade.Unavailable != "" {
		t.Fatalf("sandbox unavailable: %s (run scripts/ensure-services.sh as root)", sandboxMade.Unavailable)
	}
	return sandboxMade
}
