package supervisor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// A deleted app's uid is not given to another app while a process of it still runs on the
// host or a file of it remains; once both are gone, the next app gets it. The zone's real
// uid table (Postgres) keeps the quarantine.
func TestFreedUIDWaitsForItsLastOwner(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	r.l.Identities.UIDs = st
	// Two uids of the tests' range: the last owner's, and one more.
	r.l.Identities.UIDBase, r.l.Identities.UIDCount = testUIDBase+600, 3
	first, second, third := uuid.NewString(), uuid.NewString(), uuid.NewString()
	uidOf := func(app string) (uint32, error) {
		if err := r.l.Identities.Ensure(ctx, app); err != nil {
			return 0, err
		}
		return r.l.Source.Sandbox.Credential(app).Uid, nil
	}
	owner, err := uidOf(first)
	if err != nil {
		t.Fatal(err)
	}
	// What outlived the app: a process of its uid on the host, and a file of it in /tmp.
	stray := exec.Command("/usr/bin/sleep", "300")
	stray.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: owner, Gid: owner}}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stray.Process.Kill(); stray.Wait() })
	leftover := filepath.Join(os.TempDir(), "tori-leftover-"+uuid.NewString())
	if err := os.WriteFile(leftover, []byte("the last tenant's"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(leftover) })
	if err := os.Chown(leftover, int(owner), int(owner)); err != nil {
		t.Fatal(err)
	}
	// The deletion as the agent makes it: the app stopped, then its record (which frees the
	// uid into quarantine).
	if err := r.l.StopApp(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return tx.DeleteApp(ctx, first, time.Now()) }); err != nil {
		t.Fatal(err)
	}

	if uid, err := uidOf(second); err != nil || uid == owner {
		t.Fatalf("the next app got uid %d (%v) while the last owner's process and file remain", uid, err)
	}
	if uid, err := uidOf(third); !errors.Is(err, store.ErrNoFreeUID) {
		t.Fatalf("with a process and a file of its last owner left, the uid was given again: %d, %v", uid, err)
	}
	stray.Process.Kill()
	stray.Wait()
	if uid, err := uidOf(third); !errors.Is(err, store.ErrNoFreeUID) {
		t.Fatalf("with a file of its last owner left, the uid was given again: %d, %v", uid, err)
	}
	os.Remove(leftover)
	if uid, err := uidOf(third); err != nil || uid != owner {
		t.Fatalf("with nothing of its last owner left, the next app got %d (%v), want %d", uid, err, owner)
	}
}
