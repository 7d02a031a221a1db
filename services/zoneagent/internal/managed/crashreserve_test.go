package managed

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"tori.dev/services/zoneagent/internal/sizecap"
)

// The image is the ceiling and what ext4's metadata takes of it (so the owner's files stay
// under 110 % of the cap even while every reserve is gone); the crash reserve is small enough
// that the owner still reaches past its cap while it is held, with room for ext4's own
// blocks the estimate leaves out (about 2 MB of a 79 MB image, measured by
// TestDatabaseHardLimitsFromTheSandbox's fill).
func TestCrashReserveBytes(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{32 << 20, 1 << 20},
		{1 << 30, (1 << 30) / 50},
		{100 << 30, 64<<20 + 800<<20},
	} {
		if got := crashReserveBytes(tc.size); got != tc.want {
			t.Errorf("crashReserveBytes(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
	for _, capBytes := range []int64{32 << 20, 64 << 20, 256 << 20, 1 << 30, 10 << 30} {
		ceiling := sizecap.Ceiling(capBytes)
		image := imageBytes(capBytes)
		metadata := metadataBytes(image)
		if image-metadata > ceiling+ceiling/100 {
			t.Errorf("cap %d: %d bytes of room with the reserve gone, over the ceiling %d", capBytes, image-metadata, ceiling)
		}
		unestimated := image * 3 / 100
		// The smallest images are mostly journal: a cap under 64 MiB is the tests' alone.
		if room := image - metadata - unestimated - crashReserveBytes(ceiling) - reserveBytes(ceiling); capBytes >= 64<<20 && room <= capBytes {
			t.Errorf("cap %d: the owner's room %d does not pass the cap", capBytes, room)
		}
	}
}

// On a database's filesystem the watch keeps a crash reserve in the tablespace's pgsql_tmp
// folder (where Postgres removes it at its next start), makes it again once it is gone and
// there is room, and asks for a checkpoint once the owner has freed more than half of it, not
// before.
func TestCeilingWatch(t *testing.T) {
	ceilings := testCeilings(t)
	name := newName()
	const capBytes = 64 << 20
	t.Cleanup(func() { _ = ceilings.Release(name) })
	if err := ceilings.Mount(name, capBytes); err != nil {
		t.Fatal(err)
	}
	// No tablespace yet: nothing to keep, nothing due.
	if due, err := ceilings.Watch(name, capBytes); err != nil || due {
		t.Fatalf("before the tablespace: due %v (%v)", due, err)
	}
	// What CREATE TABLESPACE makes inside the folder.
	version := filepath.Join(ceilings.Location(name), "PG_15_202209061")
	if err := os.Mkdir(version, 0o700); err != nil {
		t.Fatal(err)
	}
	if due, err := ceilings.Watch(name, capBytes); err != nil || due {
		t.Fatalf("the first watch: due %v (%v)", due, err)
	}
	reserve := filepath.Join(version, "pgsql_tmp", crashReserveName)
	want := crashReserveBytes(sizecap.Ceiling(capBytes))
	fi, err := os.Stat(reserve)
	if err != nil {
		t.Fatal(err)
	}
	if blocks := fi.Sys().(*syscall.Stat_t).Blocks * 512; fi.Size() != want || blocks < want {
		t.Fatalf("the crash reserve: %d bytes, %d allocated, want %d", fi.Size(), blocks, want)
	}
	dir, err := os.Stat(filepath.Dir(reserve))
	if err != nil {
		t.Fatal(err)
	}
	if st := dir.Sys().(*syscall.Stat_t); st.Uid == 0 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("pgsql_tmp: uid %d, mode %v (the cluster's user's, as Postgres makes it)", st.Uid, dir.Mode().Perm())
	}

	// The owner frees a little: no checkpoint is due.
	write := func(file string, n int64) {
		t.Helper()
		f, err := os.Create(filepath.Join(ceilings.Location(name), file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
			t.Fatal(err)
		}
	}
	write("small", want/4)
	if due, _ := ceilings.Watch(name, capBytes); due {
		t.Fatal("a checkpoint asked for while the owner only wrote")
	}
	os.Remove(filepath.Join(ceilings.Location(name), "small"))
	if due, _ := ceilings.Watch(name, capBytes); due {
		t.Fatal("a checkpoint asked for after a quarter of the reserve was freed")
	}
	// It frees more than half the reserve: one checkpoint is due, then none until it frees again.
	write("big", want)
	if due, _ := ceilings.Watch(name, capBytes); due {
		t.Fatal("a checkpoint asked for while the owner wrote")
	}
	os.Remove(filepath.Join(ceilings.Location(name), "big"))
	if due, _ := ceilings.Watch(name, capBytes); !due {
		t.Fatal("no checkpoint asked for after the owner freed the whole reserve's worth")
	}
	if due, _ := ceilings.Watch(name, capBytes); due {
		t.Fatal("a second checkpoint asked for with nothing freed since")
	}

	// Postgres removes it at its start; the next watch makes it again.
	if err := os.Remove(reserve); err != nil {
		t.Fatal(err)
	}
	if _, err := ceilings.Watch(name, capBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(reserve); err != nil {
		t.Fatalf("the crash reserve not made again: %v", err)
	}
}
