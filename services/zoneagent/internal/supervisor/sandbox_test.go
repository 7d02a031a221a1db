package supervisor

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// The runner's tests use a zone of their own (its cgroups and nftables table) and uids far
// from the agent's default range.
const (
	testZone    = "runnertest"
	testUIDBase = 310000
)

var (
	sandboxOnce sync.Once
	sandboxMade sandbox.Sandbox
)

// testSandbox is the real sandbox, made once per test binary. These tests run as root on
// the project's CI hosts (Debian, cgroup v1) with bubblewrap, passt and nftables installed
// by scripts/ensure-services.sh: a host without them fails here, never skips.
func testSandbox(t *testing.T) sandbox.Sandbox {
	t.Helper()
	sandboxOnce.Do(func() {
		sandboxMade = sandbox.NewSandbox(context.Background(), sandbox.SandboxConfig{
			Zone: testZone, Bwrap: "bwrap", Pasta: "pasta", Nft: "nft", CgroupMount: "/sys/fs/cgroup",
			UIDBase: testUIDBase, UIDCount: 1000, MemoryBytes: 1 << 30, MaxProcesses: 256, MaxOpenFiles: 1024,
			DiskBytes: 64 << 20, PoolerPort: 6432, GoRoot: sandbox.FindGoRoot(),
		})
	})
	if sandboxMade.Unavailable != "" {
		t.Fatalf("sandbox unavailable: %s (run scripts/ensure-services.sh as root)", sandboxMade.Unavailable)
	}
	return sandboxMade
}

// memUIDs is the uid table in memory, with its quarantine.
type memUIDs struct {
	mu         sync.Mutex
	byID       map[string]uint32
	quarantine map[uint32]string
}

func newMemUIDs() *memUIDs {
	return &memUIDs{byID: map[string]uint32{}, quarantine: map[uint32]string{}}
}

func (m *memUIDs) AllocateUID(_ context.Context, appID string, lo, hi uint32) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if uid, ok := m.byID[appID]; ok {
		return uid, nil
	}
	used := map[uint32]bool{}
	for _, u := range m.byID {
		used[u] = true
	}
	for u := range m.quarantine {
		used[u] = true
	}
	for u := lo; u <= hi; u++ {
		if !used[u] {
			m.byID[appID] = u
			return u, nil
		}
	}
	return 0, fmt.Errorf("full")
}

func (m *memUIDs) QuarantinedUIDs(context.Context) (map[uint32]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[uint32]string{}
	for u, a := range m.quarantine {
		out[u] = a
	}
	return out, nil
}

func (m *memUIDs) ReleaseUID(_ context.Context, uid uint32) error {
	m.mu.Lock()
	delete(m.quarantine, uid)
	m.mu.Unlock()
	return nil
}

func chownTree(dir string, uid uint32) error { return os.Chown(dir, int(uid), int(uid)) }
