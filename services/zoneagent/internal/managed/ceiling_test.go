package managed

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/sizecap"
)

// testCeilings are ceilings in folders of this test's own; the mount points sit where the
// cluster's OS user can reach them (a test's temp dir is root's alone).
func testCeilings(t *testing.T) *Ceilings {
	t.Helper()
	mkfs, err1 := exec.LookPath("mkfs.ext4")
	resize, err2 := exec.LookPath("resize2fs")
	if os.Geteuid() != 0 || err1 != nil || err2 != nil {
		t.Fatal("the ceiling needs root and e2fsprogs (mkfs.ext4, resize2fs)")
	}
	mounts, err := os.MkdirTemp("/var/tmp", "tori-ceilings-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mounts, 0o711); err != nil {
		t.Fatal(err)
	}
	// Remove, never RemoveAll: a filesystem a failed test left mounted there holds a live
	// tablespace's files, and deleting them would leave the cluster a tablespace it cannot
	// recover into.
	t.Cleanup(func() { os.Remove(mounts) })
	return &Ceilings{ImagesDir: t.TempDir(), MountsDir: mounts, SuperURL: testinfra.ZonePostgresSuperURL(t),
		Owner: "postgres", Mkfs: mkfs, Resize: resize}
}

func sqlState(err error) string {
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) {
		return pgErr.SQLState()
	}
	return ""
}

// However the owner writes (in a READ WRITE transaction, as the contract's recovery allows,
// or through temporary files), its database stops at about 110 % of the cap with "disk
// full"; the recovery transaction still frees space; the owner cannot put files elsewhere;
// dropping the database removes its filesystem.
func TestCeilingHoldsUnderTheCap(t *testing.T) {
	ctx := context.Background()
	ceilings := testCeilings(t)
	c := Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute, Ceilings: ceilings}
	const capBytes = 64 << 20
	name := newName()
	if err := c.Create(ctx, name, "pw", 3, capBytes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background(), name) })
	// Again (a redelivered command): nothing changes, nothing fails.
	if err := c.Create(ctx, name, "pw", 3, capBytes); err != nil {
		t.Fatal(err)
	}
	own, err := pgx.Connect(ctx, dbURL(c.AdminURL, name, "pw", name))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	// The contract's read-only stage, as the size check sets it.
	if err := c.SetReadOnly(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	own.Close(ctx)
	if own, err = pgx.Connect(ctx, dbURL(c.AdminURL, name, "pw", name)); err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	if _, err := own.Exec(ctx, "CREATE TABLE big (body text)"); sqlState(err) != "25006" {
		t.Fatalf("a write in the read-only stage: %v", err)
	}

	// Rows that do not compress, 1.6 MB a statement, in one READ WRITE transaction.
	tx, err := own.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SET TRANSACTION READ WRITE"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE big (body text)"); err != nil {
		t.Fatal(err)
	}
	var full error
	for i := 0; i < 200 && full == nil; i++ {
		_, full = tx.Exec(ctx, "INSERT INTO big SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 50) g, generate_series(1, 1000) r GROUP BY r")
	}
	if sqlState(full) != "53100" {
		t.Fatalf("writing past the ceiling: want disk_full (53100), got %v", full)
	}
	// Measured while the transaction still holds what it wrote.
	assertUnderCeiling(t, c, name, capBytes)
	_ = tx.Rollback(ctx)

	// Temporary files (a sort spilling to disk) meet the same ceiling.
	_, err = own.Exec(ctx, "SET work_mem = '64kB'; SELECT count(*) FROM (SELECT md5(g::text) m FROM generate_series(1, 3000000) g ORDER BY 1) s")
	if sqlState(err) != "53100" || !strings.Contains(err.Error(), "pgsql_tmp") {
		t.Fatalf("a temp-file-heavy query past the ceiling: %v", err)
	}
	_, _ = own.Exec(ctx, "RESET work_mem")
	assertUnderCeiling(t, c, name, capBytes)

	// Commit what fits, so there is a table to truncate.
	if _, err := own.Exec(ctx, "BEGIN; SET TRANSACTION READ WRITE; CREATE TABLE big (body text); COMMIT"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		_, err := own.Exec(ctx, "BEGIN; SET TRANSACTION READ WRITE; INSERT INTO big SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 50) g, generate_series(1, 1000) r GROUP BY r; COMMIT")
		if err != nil {
			if sqlState(err) != "53100" {
				t.Fatalf("a committed write past the ceiling: %v", err)
			}
			break
		}
	}
	_, _ = own.Exec(ctx, "ROLLBACK")
	assertUnderCeiling(t, c, name, capBytes)

	// The owner cannot put files anywhere else.
	for _, stmt := range []string{
		"BEGIN; SET TRANSACTION READ WRITE; CREATE TABLE elsewhere (v int) TABLESPACE pg_default; COMMIT",
		"SET temp_tablespaces = pg_default",
	} {
		if _, err := own.Exec(ctx, stmt); sqlState(err) != "42501" {
			t.Errorf("%s: want insufficient_privilege, got %v", stmt, err)
		}
		_, _ = own.Exec(ctx, "ROLLBACK")
	}

	// At the ceiling the zone's size check gives back a part of the reserve once the
	// filesystem has stayed full from one check to the next. A writer that goes on writing
	// takes that part; the next checks give back another, and the contract's recovery still
	// finds room and frees the space.
	if full, err := ceilings.Tend(name, capBytes); err != nil || !full || len(ceilings.heldReserves(name)) != reserveParts {
		t.Fatalf("the first check of a full filesystem: full %v (%v), %d parts held", full, err, len(ceilings.heldReserves(name)))
	}
	for round := 1; round <= 2; round++ {
		if full, err := ceilings.Tend(name, capBytes); err != nil || !full {
			t.Fatalf("the full filesystem tended: full %v (%v)", full, err)
		}
		if held := len(ceilings.heldReserves(name)); held != reserveParts-round {
			t.Fatalf("after %d releases %d parts of the reserve are held", round, held)
		}
		if round == 2 {
			break
		}
		_, err := own.Exec(ctx, "BEGIN; SET TRANSACTION READ WRITE; INSERT INTO big SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 50) g, generate_series(1, 1000) r GROUP BY r; COMMIT")
		if sqlState(err) != "53100" {
			t.Fatalf("the writer going on after a part is given back: %v", err)
		}
		_, _ = own.Exec(ctx, "ROLLBACK")
		if full, err := ceilings.Tend(name, capBytes); err != nil || !full {
			t.Fatalf("the part given back was not taken by the writer: full %v (%v)", full, err)
		}
	}
	if _, err := own.Exec(ctx, "BEGIN; SET TRANSACTION READ WRITE; TRUNCATE big; COMMIT"); err != nil {
		t.Fatalf("the recovery transaction: %v", err)
	}
	if size, err := c.Size(ctx, name); err != nil || size > capBytes/2 {
		t.Fatalf("after the truncate: %d bytes (%v)", size, err)
	}
	if err := c.SetReadOnly(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	own.Close(ctx)
	// With room again, the whole reserve is kept back again.
	if full, err := ceilings.Tend(name, capBytes); err != nil || full {
		t.Fatalf("tended after the recovery: full %v (%v)", full, err)
	}
	if held := len(ceilings.heldReserves(name)); held != reserveParts {
		t.Fatalf("after the recovery %d parts of the reserve are held", held)
	}

	dir := ceilings.mountPoint(name)
	if !mounted(dir) {
		t.Fatal("the database's filesystem is not mounted")
	}
	if err := c.Drop(ctx, name); err != nil {
		t.Fatal(err)
	}
	if mounted(dir) {
		t.Error("the filesystem is still mounted after the drop")
	}
	if _, err := os.Stat(ceilings.image(name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the image is left after the drop: %v", err)
	}
}

func assertUnderCeiling(t *testing.T, c Cluster, name string, capBytes int64) {
	t.Helper()
	size, err := c.Size(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if size*100 > capBytes*110 {
		t.Fatalf("the database holds %d bytes, over 110 %% of its %d-byte cap", size, capBytes)
	}
	t.Logf("%d bytes on a cap of %d (%.0f %%)", size, capBytes, float64(size)*100/float64(capBytes))
}

// An agent's start mounts what a reboot unmounted; while unmounted, the tablespace's folder
// does not exist, so nothing the cluster writes lands on the host's disk. (Growing a
// filesystem online for a larger cap needs CAP_SYS_RESOURCE, which the machine the tests run
// on withholds from root: not tested here.)
func TestCeilingRemounts(t *testing.T) {
	ceilings := testCeilings(t)
	name := newName()
	t.Cleanup(func() { _ = ceilings.Release(name) })
	if err := ceilings.Mount(name, 64<<20); err != nil {
		t.Fatal(err)
	}
	size := fsBytes(t, ceilings.mountPoint(name))
	if size > sizecap.Ceiling(64<<20) || size < 60<<20 {
		t.Fatalf("%d bytes free on a 64 MiB cap's filesystem", size)
	}
	fi, err := os.Stat(ceilings.Location(name))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid == 0 || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the tablespace folder: uid %d, mode %v", st.Uid, fi.Mode().Perm())
	}
	if err := syscall.Unmount(ceilings.mountPoint(name), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ceilings.Location(name))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unmounted, the tablespace folder must not exist: %v", err)
	}
	if err := ceilings.Remount(map[string]int64{name: 64 << 20, newName(): 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if !mounted(ceilings.mountPoint(name)) || fsBytes(t, ceilings.mountPoint(name)) != size {
		t.Fatal("not mounted again as it was")
	}
}

func fsBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}
