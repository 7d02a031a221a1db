package managed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"regexp"
	"time"

	"tori.dev/pkg/objectstore"
)

// dumpKey is where a dump lives in the zone's bucket: dumps/<database id>/<dump id>.dump
// (docs/conventions.md, "Dump objects").
var (
	dumpKey      = regexp.MustCompile(`^dumps/[0-9a-f-]{36}/[0-9a-f-]{36}\.dump$`)
	databaseIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ValidDumpKey reports whether key is a dump's object key; nothing else is written or read.
func ValidDumpKey(key string) bool { return dumpKey.MatchString(key) }

// DumpKey is the object key of dump dumpID of database databaseID.
func DumpKey(databaseID, dumpID string) string {
	return DumpPrefix(databaseID) + dumpID + ".dump"
}

// DumpPrefix is the prefix every dump of database databaseID lives under.
func DumpPrefix(databaseID string) string { return "dumps/" + databaseID + "/" }

// DumpBucket is the zone's own bucket as dumps use it (*objectstore.Store, the zone's
// credentials).
type DumpBucket interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (objectstore.Info, error)
	Get(ctx context.Context, key string, rng *objectstore.Range) (io.ReadCloser, objectstore.Info, error)
	Head(ctx context.Context, key string) (objectstore.Info, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, fn func(objectstore.Info) bool) error
}

// DumpPresigner makes a download URL of one object: the zone's bucket seen through the
// store's public address (OBJECT_STORE_PUBLIC_URL), so the URL works where a customer is.
type DumpPresigner interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Dumper runs pg_dump and pg_restore against the zone's cluster for a database, logged in
// as the database's own login with its password, and keeps the dumps in the zone's bucket.
// Never as the provisioning role: a dump or restore evaluates what the customer defined (a
// CHECK's function, a domain, a generated column), and a session of a CREATEROLE role that
// does so hands the customer that role (it may RESET ROLE and GRANT itself any role).
//
// They connect over the cluster's Unix socket, which no customer can reach (an app's sandbox
// has no path to it; the pooler connects over TCP): the statement watchdog tells the zone's
// sessions by that (client_addr is null), and a login's CONNECTION LIMIT keeps one session
// above the plan's for them (ZoneConnections).
type Dumper struct {
	Bin        string // pg_dump (Debian's wrapper picks the newest, never older than the cluster)
	RestoreBin string // pg_restore
	AdminURL   string // the cluster's port (and, without Socket, its address) is taken from it
	// Socket is the directory of the cluster's Unix socket; empty: over TCP to AdminURL's
	// host (a cluster on another host: the watchdog then treats a long dump as a customer's).
	Socket    string
	Bucket    DumpBucket
	Presigner DumpPresigner
	// URLLifetime is how long a download URL works (ZONE_DUMP_URL_TTL).
	URLLifetime time.Duration
}

// pgArgs are the connection arguments and environment of login with password.
func (d Dumper) pgArgs(login, password string) (args, env []string, err error) {
	u, err := url.Parse(d.AdminURL)
	if err != nil {
		return nil, nil, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster address: %w", err)
	}
	if d.Socket != "" {
		host = d.Socket
	}
	// The customer's own settings (ALTER ROLE … SET) apply: it is the customer's session.
	return []string{"--host", host, "--port", port, "--username", login, "--no-password"},
		[]string{"PGPASSWORD=" + password, "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=30", "PATH=/usr/bin:/bin"}, nil
}

// Dump streams database name in pg_dump's custom format into the zone's bucket at key (a
// multipart upload read one part at a time: nothing on local disk, one part in memory) and
// returns its size, logged in as login (one of the database's, logins.go). On failure
// nothing is left at key: a failed pg_dump fails the upload, which the store aborts.
func (d Dumper) Dump(ctx context.Context, name, login, password, key string) (int64, error) {
	if !ValidLogin(name, login) || !ValidDumpKey(key) || password == "" {
		return 0, errors.New("managed: dump: invalid name or key")
	}
	conn, env, err := d.pgArgs(login, password)
	if err != nil {
		return 0, fmt.Errorf("managed: dump: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Without owners and grants: the dump restores into any database as any role, as a
	// customer's pg_restore or our own restore needs.
	args := append([]string{"--format=custom", "--no-owner", "--no-privileges"}, conn...)
	cmd := exec.CommandContext(ctx, d.Bin, append(args, "--dbname", name)...)
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("managed: pg_dump %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			// The upload sees an error instead of the end of the stream and is aborted.
			pw.CloseWithError(fmt.Errorf("pg_dump: %v", err))
		} else {
			pw.Close()
		}
		exited <- err
	}()
	info, putErr := d.Bucket.Put(ctx, key, pr, -1, "application/octet-stream")
	if putErr != nil {
		// An upload that stopped early (the store refused it) stops pg_dump too.
		cancel()
		pr.CloseWithError(putErr)
	}
	runErr := <-exited
	if runErr != nil {
		return 0, fmt.Errorf("managed: pg_dump %s: %v: %s", name, runErr, bytes.TrimSpace(stderr.Bytes()))
	}
	if putErr != nil {
		return 0, fmt.Errorf("managed: dump %s into the bucket: %w", name, putErr)
	}
	return info.Size, nil
}

// Restore loads the dump at key into database name logged in as its owner with password (a
// database just made), in one transaction (pg_restore --single-transaction
// --exit-on-error): the database holds all of it or none. The dump is streamed from the
// zone's bucket into pg_restore.
func (d Dumper) Restore(ctx context.Context, name, password, key string) error {
	if !ValidName(name) || !ValidDumpKey(key) || password == "" {
		return errors.New("managed: restore: invalid name or key")
	}
	conn, env, err := d.pgArgs(name, password)
	if err != nil {
		return fmt.Errorf("managed: restore: %w", err)
	}
	body, _, err := d.Bucket.Get(ctx, key, nil)
	if err != nil {
		return fmt.Errorf("managed: restore: the dump %s: %w", key, err)
	}
	defer body.Close()
	// What it makes is the owner's: the owner makes it.
	args := append([]string{"--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error"}, conn...)
	cmd := exec.CommandContext(ctx, d.RestoreBin, append(args, "--dbname", name)...)
	cmd.Env = env
	cmd.Stdin = body
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("managed: pg_restore %s: %v: %s", name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// Exists reports whether the dump at key is in the zone's bucket.
func (d Dumper) Exists(ctx context.Context, key string) (bool, error) {
	if !ValidDumpKey(key) {
		return false, nil
	}
	_, err := d.Bucket.Head(ctx, key)
	if errors.Is(err, objectstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DownloadURL is a URL that downloads the dump at key without credentials, and how long it
// works (URLLifetime).
func (d Dumper) DownloadURL(ctx context.Context, key string) (string, time.Duration, error) {
	if !ValidDumpKey(key) {
		return "", 0, fmt.Errorf("managed: %q is not a dump key", key)
	}
	u, err := d.Presigner.PresignGet(ctx, key, d.URLLifetime)
	return u, d.URLLifetime, err
}

// Delete removes the dumps at keys and returns how many were there. What is gone already
// counts as done.
func (d Dumper) Delete(ctx context.Context, keys []string) (int, error) {
	n := 0
	for _, key := range keys {
		if !ValidDumpKey(key) {
			return n, fmt.Errorf("managed: %q is not a dump key", key)
		}
		if _, err := d.Bucket.Head(ctx, key); errors.Is(err, objectstore.ErrNotFound) {
			continue
		} else if err != nil {
			return n, err
		}
		if err := d.Bucket.Delete(ctx, key); err != nil {
			return n, err
		}
		dumpsReclaimed.WithLabelValues("pruned").Inc()
		n++
	}
	return n, nil
}

// DeleteDatabase removes every dump of database databaseID (the database is gone) and
// returns how many there were.
func (d Dumper) DeleteDatabase(ctx context.Context, databaseID string) (int, error) {
	if !databaseIDRe.MatchString(databaseID) {
		// Never an empty or partial prefix: that would reach other databases' dumps.
		return 0, fmt.Errorf("managed: %q is not a database id", databaseID)
	}
	var keys []string
	if err := d.Bucket.List(ctx, DumpPrefix(databaseID), func(o objectstore.Info) bool {
		keys = append(keys, o.Key)
		return true
	}); err != nil {
		return 0, err
	}
	n := 0
	for _, key := range keys {
		if err := d.Bucket.Delete(ctx, key); err != nil {
			return n, err
		}
		dumpsReclaimed.WithLabelValues("database_deleted").Inc()
		n++
	}
	return n, nil
}
