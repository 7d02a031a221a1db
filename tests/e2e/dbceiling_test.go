package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// fullDatabaseWriteFor is how long the owner of a database at its ceiling keeps writing,
// with the zone agent running and again with it stopped. CI runs this; TEST_CEILING_WRITE_FOR
// (a Go duration) shortens it while developing.
const fullDatabaseWriteFor = time.Minute

// One customer's database filled to its ceiling harms only itself (issue 36): its owner keeps
// writing into the full filesystem for a minute, yet the cluster's CHECKPOINT succeeds and
// another customer's database is dropped, first with the zone agent running and then with it
// stopped; after an immediate stop the cluster recovers and starts; the owner never holds
// more than 110 % of its cap. The cluster is one of the test's own (it is filled and crashed),
// never the shared zone cluster.
func TestFullDatabaseHarmsOnlyItself(t *testing.T) {
	writeFor := fullDatabaseWriteFor
	if v := os.Getenv("TEST_CEILING_WRITE_FOR"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		writeFor = d
	}
	const capBytes = 32 << 20
	cl := startOwnCluster(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN":             "100000",
		"ZONE_POSTGRES_TABLESPACE_URL":     cl.super,
		"DATABASE_SIZE_CHECK_INTERVAL":     "200ms",
		"DATABASE_CEILING_CHECK_INTERVAL":  "200ms",
		"ZONE_DATABASE_MAX_BYTES_OVERRIDE": fmt.Sprint(capBytes),
	}})
	owner := s.NewAccount(t, "full-db")
	neighbour := s.NewAccount(t, "full-db-neighbour")
	full, _ := ceilingDatabase(t, s, owner)
	droppedLive, droppedLiveSlug := ceilingDatabase(t, s, neighbour)
	droppedStopped, _ := ceilingDatabase(t, s, neighbour)

	ctx := context.Background()
	super := cl.connect(t)
	defer func() { super.Close(context.Background()) }()
	// The owner's password, known to the test (the zone keeps its own in the pooler's file).
	if _, err := super.Exec(ctx, "ALTER ROLE "+pgx.Identifier{full}.Sanitize()+" PASSWORD 'owner-pw'"); err != nil {
		t.Fatal(err)
	}
	w := &ceilingWriter{url: fmt.Sprintf("postgres://%s:owner-pw@%s/%s?sslmode=disable", full, cl.addr, full)}
	stop := w.start()
	defer stop()
	harness.Eventually(t, 2*time.Minute, "the owner's writes refused at its ceiling", func() bool { return w.diskFull.Load() > 0 })
	t.Logf("the database is full: %d writes refused for want of room so far", w.diskFull.Load())

	underCeiling := func(when string) {
		t.Helper()
		var size int64
		if err := super.QueryRow(ctx, "SELECT pg_database_size($1)", full).Scan(&size); err != nil {
			t.Fatalf("%s: size: %v", when, err)
		}
		t.Logf("%s: the full database holds %d bytes (%.0f %% of its cap)", when, size, float64(size)*100/capBytes)
		if size*100 > capBytes*110 {
			t.Fatalf("%s: the database holds %d bytes, over 110 %% of its %d-byte cap", when, size, capBytes)
		}
	}
	keepWriting := func(when string) {
		t.Helper()
		before := w.diskFull.Load()
		deadline := time.Now().Add(writeFor)
		for time.Now().Before(deadline) {
			time.Sleep(5 * time.Second)
			underCeiling(when)
		}
		if w.diskFull.Load() == before {
			t.Fatalf("%s: the owner's writes were never refused: it was not writing at its ceiling", when)
		}
	}
	checkpoint := func(when string) {
		t.Helper()
		if _, err := super.Exec(ctx, "CHECKPOINT"); err != nil {
			t.Fatalf("%s: CHECKPOINT: %v\n%s", when, err, cl.logTail(t))
		}
	}

	// With the zone agent running.
	keepWriting("agent running")
	checkpoint("agent running")
	if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + droppedLiveSlug + "/database", Token: neighbour.Token}); r.Status != http.StatusAccepted {
		t.Fatalf("delete the neighbour's database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, time.Minute, "the neighbour's database dropped by the zone", func() bool {
		return !cl.hasDatabase(t, super, droppedLive)
	})

	// With the zone agent stopped: only Postgres and the filesystem hold the line.
	s.Stop("zoneagent")
	keepWriting("agent stopped")
	checkpoint("agent stopped")
	if _, err := super.Exec(ctx, "DROP DATABASE "+pgx.Identifier{droppedStopped}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Fatalf("drop another database with the agent stopped: %v\n%s", err, cl.logTail(t))
	}

	// The crash reserve the agent kept in the tablespace's pgsql_tmp, which Postgres itself
	// frees before redo.
	var location string
	if err := super.QueryRow(ctx, `SELECT pg_tablespace_location(dattablespace) FROM pg_database WHERE datname = $1`, full).Scan(&location); err != nil {
		t.Fatal(err)
	}
	reserves := filepath.Join(location, "PG_*", "pgsql_tmp", "pgsql_tmp_zone_crash_reserve")
	if held, _ := filepath.Glob(reserves); len(held) != 1 {
		t.Fatalf("no crash reserve on the full database's filesystem (%s)", reserves)
	}

	// A crash while the owner still writes: recovery completes and the cluster serves.
	super.Close(ctx)
	cl.pgctl(t, "stop", "-m", "immediate")
	stop()
	cl.pgctl(t, "start", "-w", "-t", "120", "-l", cl.log)
	super = cl.connect(t)
	if held, _ := filepath.Glob(reserves); len(held) != 0 {
		t.Fatalf("the crash reserve is still there after the restart: Postgres did not free it for redo")
	}
	checkpoint("after recovery")
	var n int64
	if err := super.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", full).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after recovery the full database is listed %d times (%v)", n, err)
	}
	underCeiling("after recovery")
}

// ceilingDatabase creates a database for a new app of account a through the API and returns
// its name on the cluster and the app's slug.
func ceilingDatabase(t *testing.T, s *harness.Stack, a harness.Account) (string, string) {
	t.Helper()
	slug := createApp(t, s, a.Token, "service")
	path := "/api/apps/" + slug + "/database"
	r := post(s, t, path, a.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("create database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, time.Minute, "the database ready", func() bool { return s.Get(t, path, a.Token).Map(t)["status"] == "ready" })
	return "db_" + strings.ReplaceAll(r.Map(t)["id"].(string), "-", ""), slug
}

// ceilingWriter is a database's owner writing as fast as it can, in READ WRITE transactions
// (the contract's way past read-only), reconnecting whenever it is cut off.
type ceilingWriter struct {
	url      string
	diskFull atomic.Int64
}

func (w *ceilingWriter) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			conn, err := pgx.Connect(ctx, w.url)
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ctx.Err() == nil {
				_, err := conn.Exec(ctx, `BEGIN; SET TRANSACTION READ WRITE;
					CREATE TABLE IF NOT EXISTS big (body text);
					INSERT INTO big SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 50) g, generate_series(1, 200) r GROUP BY r;
					COMMIT`)
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "53100" {
					w.diskFull.Add(1)
				}
				if err != nil {
					_, _ = conn.Exec(ctx, "ROLLBACK")
					if conn.IsClosed() {
						break
					}
				}
			}
			conn.Close(context.Background())
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}

// ownCluster is a Postgres cluster of the test's own, made with initdb as the postgres OS
// user, on a free port, configured as scripts/zone-postgres.sh configures the zone's.
type ownCluster struct {
	dir, data, log, addr, super, bin string
}

func startOwnCluster(t *testing.T) *ownCluster {
	t.Helper()
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		t.Fatalf("pg_config: %v", err)
	}
	bin := strings.TrimSpace(string(bindir))
	// Under /var/tmp: the postgres OS user cannot reach a test's temp dir (root's alone).
	dir, err := os.MkdirTemp("/var/tmp", "tori-own-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	addr := testinfra.FreeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	cl := &ownCluster{dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log"), addr: addr,
		super: "postgres://postgres@/postgres?host=" + url.QueryEscape(dir) + "&port=" + port + "&sslmode=disable"}
	cl.asPostgres(t, filepath.Join(bin, "initdb"), "-D", cl.data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256")
	conf := fmt.Sprintf("port = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\npassword_encryption = 'scram-sha-256'\ntemp_file_limit = '1GB'\n", port, dir)
	f, err := os.OpenFile(filepath.Join(cl.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	cl.bin = bin
	cl.pgctl(t, "start", "-w", "-t", "60", "-l", cl.log)
	t.Cleanup(func() { cl.asPostgresQuiet(filepath.Join(bin, "pg_ctl"), "-D", cl.data, "-m", "immediate", "stop") })
	// The stack's zone agent and its provisioning role live on this cluster.
	t.Setenv("TEST_ZONE_POSTGRES_URL", cl.super)
	t.Setenv("TEST_ZONE_POSTGRES_ADDR", addr)
	return cl
}

func (cl *ownCluster) pgctl(t *testing.T, args ...string) {
	t.Helper()
	cl.asPostgres(t, append([]string{filepath.Join(cl.bin, "pg_ctl"), "-D", cl.data}, args...)...)
}

func (cl *ownCluster) asPostgres(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := cl.asPostgresQuiet(argv...); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", filepath.Base(argv[0]), err, out, cl.logTail(t))
	}
}

func (cl *ownCluster) asPostgresQuiet(argv ...string) ([]byte, error) {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--"}, argv...)...)
	cmd.Dir = cl.dir
	return cmd.CombinedOutput()
}

func (cl *ownCluster) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cl.super)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (cl *ownCluster) hasDatabase(t *testing.T, c *pgx.Conn, name string) bool {
	t.Helper()
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// logTail is the end of the cluster's log, for a failure's message.
func (cl *ownCluster) logTail(t *testing.T) string {
	b, _ := os.ReadFile(cl.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
