package testinfra

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/pgstore"
)

func TestNamespaceRemovesTheBusNamesWhenTheTestEnds(t *testing.T) {
	conn, err := amqp.Dial(AMQPURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ns string
	t.Run("a test using the bus", func(t *testing.T) {
		ns = Namespace(t)
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		if err := ch.ExchangeDeclare(ns+".tori.events", amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	err = ch.ExchangeDeclarePassive(ns+".tori.events", amqp.ExchangeTopic, true, false, false, false, nil)
	if amqpErr, ok := err.(*amqp.Error); !ok || amqpErr.Code != amqp.NotFound {
		t.Fatalf("exchange still there after the test ended: %v", err)
	}
}

func TestNewDatabaseClonesTheTemplate(t *testing.T) {
	setups := 0
	setup := func(ctx context.Context, url string) error {
		setups++
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `CREATE TABLE marker (x int); INSERT INTO marker VALUES (7)`)
		return err
	}
	key := "testinfra_" + randomHex(4)
	a, b := NewDatabase(t, key, setup), NewDatabase(t, key, setup)
	if a == b || setups != 1 {
		t.Fatalf("databases %s %s, setups %d", a, b, setups)
	}
	for _, url := range []string{a, b} {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		var x int
		if err := c.QueryRow(context.Background(), `SELECT x FROM marker`).Scan(&x); err != nil || x != 7 {
			t.Fatalf("clone lacks the template's data: %v %d", err, x)
		}
		c.Close(context.Background())
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), withDatabase(PostgresURL(t), "postgres"))
		if err == nil {
			c.Exec(context.Background(), "ALTER DATABASE tpl_"+key+" WITH IS_TEMPLATE false")
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS tpl_"+key)
			c.Close(context.Background())
		}
	})
}

func TestProxyCutsAndRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo
		}
	}()
	p := NewProxy(t, ln.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo through the proxy: %q %v", buf, err)
	}
	p.Down()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Fatal("connection survived Down")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		c2.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c2.Read(buf); err == nil {
			t.Fatal("a new connection worked while down")
		}
		c2.Close()
	}
	p.Up()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	c3.Write([]byte("pong"))
	c3.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(c3, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("echo after Up: %q %v", buf, err)
	}
}

func TestServicePoolConnectsAsTheServicesRole(t *testing.T) {
	svc := pgstore.Service{Schema: "tinfra", Role: "tori_test_tinfra"}
	sets := []pgstore.MigrationSet{{Name: "tinfra", FS: fstest.MapFS{"001.sql": {Data: []byte("CREATE TABLE things (x int)")}}}}
	pool := ServicePool(t, svc, sets...)
	var user, path string
	if err := pool.QueryRow(context.Background(), `SELECT current_user, current_setting('search_path')`).Scan(&user, &path); err != nil {
		t.Fatal(err)
	}
	if user != svc.Role || path != svc.Schema {
		t.Fatalf("connected as %s with search_path %s", user, path)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO things VALUES (1)`); err != nil {
		t.Fatalf("the migrated table is not there: %v", err)
	}
}

// The zone provisioner logs in over TCP with its password, may create databases and roles,
// is no superuser, and what it made goes with it.
func TestZoneProvisionerURL(t *testing.T) {
	var db string
	t.Run("provisioner", func(t *testing.T) {
		u := ZoneProvisionerURL(t)
		ctx := context.Background()
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var super, createdb, createrole bool
		if err := c.QueryRow(ctx, `SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createdb, &createrole); err != nil {
			t.Fatal(err)
		}
		if super || !createdb || !createrole {
			t.Fatalf("super %v createdb %v createrole %v", super, createdb, createrole)
		}
		db = "t_" + randomHex(6) + "_app"
		for _, s := range []string{
			"CREATE ROLE " + db + " LOGIN PASSWORD 'x'",
			"GRANT " + db + " TO current_user",
			"CREATE DATABASE " + db + " OWNER " + db,
		} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		bad, _ := url.Parse(u)
		bad.User = url.UserPassword(bad.User.Username(), "wrong")
		if c2, err := pgx.Connect(ctx, bad.String()); err == nil {
			c2.Close(ctx)
			t.Fatal("a wrong password logs in over TCP")
		}
	})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_database WHERE datname = $1) + (SELECT count(*) FROM pg_roles WHERE rolname = $1)`, db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d of the app's database and role left after the test", n)
	}
}

// Tests of several packages make and drop provisioners at once: each one's grant on the
// maintenance database and another's revoke never collide ("tuple concurrently updated").
func TestZoneProvisionersComeAndGoConcurrently(t *testing.T) {
	for round := range 4 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			for i := range 6 {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					ZoneProvisionerURL(t) // fails the test on any error; its cleanup drops it
				})
			}
		})
	}
}
