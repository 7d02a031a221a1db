package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

var (
	alpha = pgstore.Service{Schema: "alpha", Role: "tori_test_alpha"}
	beta  = pgstore.Service{Schema: "beta", Role: "tori_test_beta"}
)

func migrations(table string) pgstore.MigrationSet {
	return pgstore.MigrationSet{Name: "test", FS: fstest.MapFS{
		"001_create.sql": {Data: []byte("CREATE TABLE " + table + " (id int PRIMARY KEY, secret text)")},
		"002_seed.sql":   {Data: []byte("INSERT INTO " + table + " VALUES (1, 'only mine')")},
	}}
}

func TestRoleCannotReadAnotherServicesSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })

	alphaPool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	defer alphaPool.Close()
	betaPool, err := pgstore.Setup(ctx, admin, beta, pgstore.WithMigrations(migrations("beta_things")))
	if err != nil {
		t.Fatal(err)
	}
	defer betaPool.Close()

	var own string
	if err := betaPool.QueryRow(ctx, `SELECT secret FROM beta_things`).Scan(&own); err != nil || own != "only mine" {
		t.Fatalf("beta reads its own table: %q %v", own, err)
	}
	for _, q := range []string{`SELECT secret FROM beta.beta_things`, `SELECT count(*) FROM beta.schema_migrations`} {
		var s any
		err := alphaPool.QueryRow(ctx, q).Scan(&s)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Fatalf("%s as alpha: want permission denied (42501), got %v", q, err)
		}
	}
	// Nor can it create anything in public, where it might share data by accident.
	_, err = alphaPool.Exec(ctx, `CREATE TABLE public.leak (x int)`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Fatalf("create in public: want 42501, got %v", err)
	}
}

func TestConcurrentMigrationsApplyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
			if err == nil {
				pool.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent setup: %v", err)
		}
	}
	url, _ := pgstore.ServiceURL(admin, alpha)
	pool, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var rows, applied int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM alpha_things`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || applied != 2 {
		t.Fatalf("rows=%d applied=%d, want 1 and 2", rows, applied)
	}
}

func TestInTxRollsBackOnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	boom := errors.New("boom")
	err = pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO alpha_things VALUES (2, 'half')`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
	var n int
	pool.QueryRow(ctx, `SELECT count(*) FROM alpha_things`).Scan(&n)
	if n != 1 {
		t.Fatalf("rolled-back row persisted: %d rows", n)
	}
}

// Roles are server-wide: services bootstrapping different databases at the same moment (as
// parallel test packages do) must not trip over each other's role updates.
func TestParallelSetupAcrossDatabases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := pgstore.Setup(ctx, admin, pgstore.Service{Schema: "alpha", Role: "tori_test_alpha", Password: "pw"}, pgstore.WithMigrations(migrations("alpha_things")))
			if err == nil {
				pool.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("parallel setup: %v", err)
		}
	}
}

// `make run` starts every service at once against a database that does not exist yet.
func TestConcurrentEnsureDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.PostgresURL(t)
	name := "t_ensure_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pgstore.EnsureDatabase(ctx, u.String())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent EnsureDatabase: %v", err)
		}
	}
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("the database does not exist: %v", err)
	}
	c.Close(ctx)
}

func TestAChangedMigrationStopsTheServiceAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })

	pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()

	// The same text again starts cleanly.
	pool, err = pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatalf("restart with unchanged migrations: %v", err)
	}
	pool.Close()

	edited := migrations("alpha_things")
	edited.FS.(fstest.MapFS)["002_seed.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO alpha_things VALUES (2, 'edited')")}
	_, err = pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(edited))
	if !errors.Is(err, pgstore.ErrMigrationChanged) || !strings.Contains(err.Error(), "test/002_seed.sql") {
		t.Fatalf("start with an edited migration = %v, want ErrMigrationChanged naming test/002_seed.sql", err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM alpha.alpha_things`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("rows after the refused start = %d, %v; want the edited migration not run", rows, err)
	}
}

func TestMigrationsAppliedBeforeChecksumsAreAdopted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE schema_migrations SET checksum = NULL`); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	pool, err = pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatalf("start over rows without checksums: %v", err)
	}
	defer pool.Close()
	var missing int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE checksum IS NULL`).Scan(&missing); err != nil || missing != 0 {
		t.Fatalf("rows still without a checksum: %d, %v", missing, err)
	}
}

func TestWithMaxConnsSizesThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMaxConns(7))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().MaxConns; got != 7 {
		t.Fatalf("MaxConns = %d, want 7", got)
	}
}
