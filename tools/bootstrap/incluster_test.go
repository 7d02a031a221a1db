package main

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestInClusterBootstrapMakesEachRoleWithItsOfflinePassword is compose's and Kubernetes'
// sequence against the real Postgres: `bootstrap -offline` writes every workload's file and
// reaches nothing; the in-cluster run (BOOTSTRAP_CREDENTIALS=env), handed those files as its
// environment, makes the database and each role and schema with exactly the password in that
// workload's file, and writes nothing.
func TestInClusterBootstrapMakesEachRoleWithItsOfflinePassword(t *testing.T) {
	ctx := context.Background()
	server := os.Getenv("TEST_DATABASE_URL")
	if server == "" {
		server = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	suffix := randomHex(t)
	db := "tori_bootstrap_" + suffix
	zone := "z" + suffix[:8]
	admin := databaseURL(t, server, db)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}

	// The service roles are the server's own (make run uses them too): their verifiers go
	// back as they were.
	old := map[string]string{}
	for _, p := range withDatabase(principals(zone)) {
		var v *string
		if err := conn.QueryRow(ctx, `SELECT rolpassword FROM pg_authid WHERE rolname = $1`, p.DB.Role).Scan(&v); err == nil && v != nil {
			old[p.DB.Role] = *v
		}
	}
	t.Cleanup(func() {
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
		conn.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{"tori_zoneagent_" + zone}.Sanitize())
		for role, v := range old {
			conn.Exec(ctx, "ALTER ROLE "+pgx.Identifier{role}.Sanitize()+" PASSWORD "+quote(v))
		}
	})

	offline := loadSettings()
	offline.AdminDB, offline.AdminAMQP, offline.DataDir, offline.Zone = admin, "amqp://rabbitmq:5672/", t.TempDir(), zone
	offline.Broker, offline.Offline, offline.ZonePostgresAddr = "definitions", true, "zone-postgres:5432"
	offline.ZoneSuperDB = "postgres://postgres@zone-postgres.invalid:5432/postgres" // never reached
	if err := offline.check(); err != nil {
		t.Fatal(err)
	}
	if err := bootstrap(ctx, offline); err != nil {
		t.Fatalf("offline: %v", err)
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil || exists {
		t.Fatalf("the offline run reached Postgres: database %s exists=%v (%v)", db, exists, err)
	}
	if _, err := os.Stat(filepath.Join(offline.DataDir, "secrets", "rabbitmq-definitions.json")); err != nil {
		t.Fatalf("no definitions: %v", err)
	}

	// The in-cluster run sees each workload's file as its environment, as compose's env_file
	// and Kubernetes' envFrom hand them over.
	want := map[string]string{} // role → password
	for _, p := range withDatabase(principals(zone)) {
		vars, err := readEnvFile(filepath.Join(offline.DataDir, "secrets", p.Name+".env"))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range vars {
			t.Setenv(k, v)
		}
		want[p.DB.Role] = passwordIn(vars[p.varPrefix()+"_DATABASE_URL"])
	}
	inCluster := loadSettings()
	inCluster.AdminDB, inCluster.AdminAMQP, inCluster.DataDir, inCluster.Zone = admin, "amqp://rabbitmq:5672/", t.TempDir(), zone
	inCluster.Broker, inCluster.Credentials, inCluster.ZoneSuperDB = "none", credentialsInEnv, "none"
	if err := inCluster.check(); err != nil {
		t.Fatal(err)
	}
	if err := bootstrap(ctx, inCluster); err != nil {
		t.Fatalf("in the cluster: %v", err)
	}

	for role, pw := range want {
		var verifier string
		if err := conn.QueryRow(ctx, `SELECT rolpassword FROM pg_authid WHERE rolname = $1`, role).Scan(&verifier); err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if !scramMatches(t, verifier, pw) {
			t.Errorf("%s's password is not the one in its file", role)
		}
	}
	dbConn, err := pgx.Connect(ctx, databaseURL(t, server, db))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range withDatabase(principals(zone)) {
		var owner string
		if err := dbConn.QueryRow(ctx, `SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = $1`, p.DB.Schema).Scan(&owner); err != nil || owner != p.DB.Role {
			t.Errorf("schema %s: owner %q (%v), want %s", p.DB.Schema, owner, err, p.DB.Role)
		}
	}
	dbConn.Close(ctx) // before the cleanup drops the database
	if entries, _ := os.ReadDir(filepath.Join(inCluster.DataDir, "secrets")); len(entries) != 0 {
		t.Errorf("the in-cluster run wrote %d files; its credentials live in the workloads' own files", len(entries))
	}
}

// scramMatches checks password against a SCRAM-SHA-256 verifier as Postgres stores it:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
func scramMatches(t *testing.T, verifier, password string) bool {
	t.Helper()
	head, keys, ok := strings.Cut(strings.TrimPrefix(verifier, "SCRAM-SHA-256$"), "$")
	iterText, saltText, ok2 := strings.Cut(head, ":")
	storedText, _, ok3 := strings.Cut(keys, ":")
	iter, err := strconv.Atoi(iterText)
	salt, err2 := base64.StdEncoding.DecodeString(saltText)
	stored, err3 := base64.StdEncoding.DecodeString(storedText)
	if !ok || !ok2 || !ok3 || err != nil || err2 != nil || err3 != nil {
		t.Fatalf("not a SCRAM-SHA-256 verifier")
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, salted)
	mac.Write([]byte("Client Key"))
	sum := sha256.Sum256(mac.Sum(nil))
	return hmac.Equal(sum[:], stored)
}

func databaseURL(t *testing.T, server, db string) string {
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
