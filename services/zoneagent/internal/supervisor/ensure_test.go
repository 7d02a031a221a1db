package supervisor

import (
	"context"
	"testing"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// countingUIDs is a uid table holding one app's uid, with one uid in quarantine, that
// counts the sweeps (each reads the quarantine first).
type countingUIDs struct {
	held   map[string]uint32
	sweeps int
}

func (c *countingUIDs) AllocateUID(_ context.Context, appID string, lo, _ uint32) (uint32, error) {
	if uid, ok := c.held[appID]; ok {
		return uid, nil
	}
	c.held[appID] = lo + uint32(len(c.held))
	return c.held[appID], nil
}
func (c *countingUIDs) QuarantinedUIDs(context.Context) (map[uint32]string, error) {
	c.sweeps++
	return map[uint32]string{4242: "gone-app"}, nil
}
func (c *countingUIDs) ReleaseUID(context.Context, uint32) error { return nil }
func (c *countingUIDs) AppUIDs(_ context.Context, ids []string) (map[string]uint32, error) {
	out := map[string]uint32{}
	for _, id := range ids {
		if uid, ok := c.held[id]; ok {
			out[id] = uid
		}
	}
	return out, nil
}

// An app that holds a uid (every app on its first wake after a restart) gets it back without
// a sweep of the host's processes and the apps folder; only a new app's allocation sweeps.
func TestEnsureSweepsOnlyForANewApp(t *testing.T) {
	uids := &countingUIDs{held: map[string]uint32{"old-app": 5001}}
	d := &Identities{AppsDir: t.TempDir(), Sandbox: &sandbox.Sandbox{}, UIDs: uids, UIDBase: 5000, UIDCount: 100}
	ctx := context.Background()
	if err := d.Ensure(ctx, "old-app"); err != nil {
		t.Fatal(err)
	}
	if c := d.Sandbox.Credential("old-app"); c == nil || c.Uid != 5001 || uids.sweeps != 0 {
		t.Fatalf("an app holding a uid: credential %+v, %d sweeps, want its uid and none", c, uids.sweeps)
	}
	if err := d.Ensure(ctx, "new-app"); err != nil {
		t.Fatal(err)
	}
	if d.Sandbox.Credential("new-app") == nil || uids.sweeps != 1 {
		t.Fatalf("a new app: %d sweeps, want one before its allocation", uids.sweeps)
	}
}
