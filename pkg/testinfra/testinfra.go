// Package testinfra gives tests real Postgres and RabbitMQ servers: the ones named by
// TEST_DATABASE_URL and TEST_AMQP_URL when set (as `make test` and CI do), otherwise
// containers started by testcontainers-go (build with -tags testcontainers). A test that
// cannot reach a server fails; it never skips.
package testinfra

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error

	amqpOnce sync.Once
	amqpURL  string
	amqpErr  error
)

// PostgresURL is an admin (superuser) URL of the test server.
func PostgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
			pgURL = u
			return
		}
		pgURL, pgErr = startPostgres(context.Background())
	})
	if pgErr != nil {
		t.Fatalf("testinfra: no Postgres: %v", pgErr)
	}
	return pgURL
}

// AMQPURL is the URL of the test broker.
func AMQPURL(t testing.TB) string {
	t.Helper()
	amqpOnce.Do(func() {
		if u := os.Getenv("TEST_AMQP_URL"); u != "" {
			amqpURL = u
			return
		}
		amqpURL, amqpErr = startRabbitMQ(context.Background())
	})
	if amqpErr != nil {
		t.Fatalf("testinfra: no RabbitMQ: %v", amqpErr)
	}
	return amqpURL
}

var (
	redisOnce sync.Once
	redisURL  string
	redisErr  error
)

// RedisURL is the test Redis (TEST_REDIS_URL, or a container with -tags testcontainers).
// Tests share it: each keeps its keys under a prefix of its own.
func RedisURL(t testing.TB) string {
	t.Helper()
	redisOnce.Do(func() {
		if u := os.Getenv("TEST_REDIS_URL"); u != "" {
			redisURL = u
			return
		}
		redisURL, redisErr = startRedis(context.Background())
	})
	if redisErr != nil {
		t.Fatalf("testinfra: no Redis: %v", redisErr)
	}
	return redisURL
}

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

// Namespace is a short name unique to this test run, for exchanges, queues and other names
// that must not collide between tests running in parallel. Queues declared under it expire
// by themselves; exchanges do not, so the bus's shared ones under it are deleted when the
// test ends (after the test's own clean-ups, which stop whatever still uses them).
func Namespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	if len(base) > 24 {
		base = base[:24]
	}
	ns := "t_" + base + "_" + randomHex(4)
	t.Cleanup(func() { removeBusNames(ns) })
	return ns
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Setup prepares a template database; adminURL names the template being built.
type Setup func(ctx context.Context, adminURL string) error

var templates sync.Map // key -> *sync.Once guarding template creation in this process

// NewDatabase gives the test a database of its own, a clone of a template that setup builds
// once per key (across processes too: the key is part of the template's name, so pass a
// fingerprint of the migrations). It returns the new database's admin URL and drops the
// database when the test ends.
func NewDatabase(t testing.TB, key string, setup Setup) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := PostgresURL(t)
	tpl := "tpl_" + nonIdent.ReplaceAllString(strings.ToLower(key), "_")
	if len(tpl) > 60 {
		tpl = tpl[:60]
	}
	onceV, _ := templates.LoadOrStore(tpl, new(sync.Once))
	var tplErr error
	onceV.(*sync.Once).Do(func() { tplErr = ensureTemplate(ctx, admin, tpl, setup) })
	if tplErr != nil {
		templates.Delete(tpl)
		t.Fatalf("testinfra: template %s: %v", tpl, tplErr)
	}

	name := "t_" + randomHex(8)
	conn := connectMaintenance(ctx, t, admin)
	defer conn.Close(ctx)
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		_, err = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tpl))
		// 55006: the template is briefly in use (another process is finishing its build).
		if err == nil || !strings.Contains(err.Error(), "55006") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("testinfra: clone %s: %v", tpl, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, withDatabase(admin, "postgres"))
		if err != nil {
			t.Errorf("testinfra: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("testinfra: drop %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}

func ensureTemplate(ctx context.Context, admin, tpl string, setup Setup) error {
	conn, err := pgx.Connect(ctx, withDatabase(admin, "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// One builder at a time across every test process on this server.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('tori.testinfra.template'))`); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('tori.testinfra.template'))`)

	var ready *bool
	err = conn.QueryRow(ctx, `SELECT datistemplate FROM pg_database WHERE datname = $1`, tpl).Scan(&ready)
	if err != nil && err != pgx.ErrNoRows {
		return err
	}
	if ready != nil && *ready {
		return nil
	}
	if ready != nil { // a build that died half-way
		if _, err := conn.Exec(ctx, "DROP DATABASE "+tpl+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+tpl); err != nil {
		return err
	}
	if err := setup(ctx, withDatabase(admin, tpl)); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	// Setup's pools are closed by now, but give the server a moment to notice.
	for attempt := 0; ; attempt++ {
		_, err = conn.Exec(ctx, "ALTER DATABASE "+tpl+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
		if err == nil || attempt > 20 {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func connectMaintenance(ctx context.Context, t testing.TB, admin string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, withDatabase(admin, "postgres"))
	if err != nil {
		t.Fatalf("testinfra: connect: %v", err)
	}
	return conn
}

func withDatabase(rawURL, db string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(fmt.Sprintf("testinfra: bad database url: %v", err))
	}
	u.Path = "/" + db
	return u.String()
}
