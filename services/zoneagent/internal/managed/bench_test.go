package managed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/testinfra"
)

// BenchmarkDumpRestore dumps and restores a database of DATABASE_BENCH_BYTES (default 1 GB)
// of rows that do not compress, through the zone's Dumper and with bare pg_dump/pg_restore on
// the same data, and reports both and their ratio (target: within 1.1×). Not part of make
// test: make bench-databases-dump.
func BenchmarkDumpRestore(b *testing.B) {
	size := int64(1 << 30)
	if v, err := strconv.ParseInt(os.Getenv("DATABASE_BENCH_BYTES"), 10, 64); err == nil && v > 0 {
		size = v
	}
	ctx := context.Background()
	admin := testinfra.ZoneProvisionerURL(b)
	c := Cluster{AdminURL: admin, Access: HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(b)}, StatementTimeout: time.Hour}
	name, restoreName := newName(), newName()
	if err := c.Create(ctx, name, "pw", 5, 1<<28); err != nil {
		b.Fatal(err)
	}
	if err := c.Create(ctx, restoreName, "pw2", 5, 1<<28); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dbURL(admin, name, "pw", name))
	if err != nil {
		b.Fatal(err)
	}
	// Rows of 1 kB of md5 hex: ~size bytes of table data.
	rows := size / 1100
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE bench (id bigint, body text);
		INSERT INTO bench SELECT g, (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 32) i)
		FROM generate_series(1, %d) g`, rows)); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	dbSize, _ := c.Size(ctx, name)
	bucket := zoneBucket(b, testinfra.StartObjectStore(b), "bench")
	d := Dumper{Bin: "pg_dump", RestoreBin: "pg_restore", AdminURL: admin, Socket: testinfra.ZonePostgresSocket(b), Bucket: bucket, Presigner: bucket, URLLifetime: time.Minute}
	key := "dumps/" + uuid.NewString() + "/" + uuid.NewString() + ".dump"
	bare := filepath.Join(b.TempDir(), "bare.dump")
	env := append(os.Environ(), "PGPASSWORD=pw", "PGSSLMODE=disable")

	var ours, theirs, oursRestore, theirsRestore time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := d.Dump(ctx, name, name, "pw", key); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)

		start = time.Now()
		cmd := exec.Command("pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--host", "127.0.0.1", "--port", "5433",
			"--username", name, "--dbname", name, "--file", bare)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare pg_dump: %v %s", err, out)
		}
		theirs += time.Since(start)

		if err := c.Drop(ctx, restoreName); err != nil {
			b.Fatal(err)
		}
		if err := c.Create(ctx, restoreName, "pw2", 5, 1<<28); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := d.Restore(ctx, restoreName, "pw2", key); err != nil {
			b.Fatal(err)
		}
		oursRestore += time.Since(start)

		if err := c.Drop(ctx, restoreName); err != nil {
			b.Fatal(err)
		}
		if err := c.Create(ctx, restoreName, "pw2", 5, 1<<28); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		cmd = exec.Command("pg_restore", "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error",
			"--host", "127.0.0.1", "--port", "5433", "--username", restoreName, "--dbname", restoreName, bare)
		cmd.Env = append(os.Environ(), "PGPASSWORD=pw2", "PGSSLMODE=disable")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare pg_restore: %v %s", err, out)
		}
		theirsRestore += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(dbSize)/1e6, "MB-database")
	b.ReportMetric(ours.Seconds()/n, "s-dump")
	b.ReportMetric(theirs.Seconds()/n, "s-bare-pg_dump")
	b.ReportMetric(oursRestore.Seconds()/n, "s-restore")
	b.ReportMetric(theirsRestore.Seconds()/n, "s-bare-pg_restore")
	b.ReportMetric((ours+oursRestore).Seconds()/(theirs+theirsRestore).Seconds(), "x-of-bare")
}
