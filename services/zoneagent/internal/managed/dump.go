package managed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// dumpKey is where a dump lives under the objects root: dumps/<database id>/<dump id>.dump.
var dumpKey = regexp.MustCompile(`^dumps/[0-9a-f-]{36}/[0-9a-f-]{36}\.dump$`)

// ValidDumpKey reports whether key is a dump's object key; nothing else reaches a path.
func ValidDumpKey(key string) bool { return dumpKey.MatchString(key) }

// Dumper runs pg_dump and pg_restore against the zone's cluster for a database, as the
// provisioning role acting as the database's login (--role).
type Dumper struct {
	Bin        string // pg_dump (Debian's wrapper picks the newest, never older than the cluster)
	RestoreBin string // pg_restore
	AdminURL   string // the cluster's address is taken from it
	Objects    string // the objects root
}

// Dump writes database name in pg_dump's custom format to key under the objects root (a
// temporary file renamed into place, so a reader never sees half of one) and returns its
// size, logged in as login (one of the database's, logins.go). On failure nothing is left
// at key.
func (d Dumper) Dump(ctx context.Context, name, login, password, key string) (int64, error) {
	if !ValidLogin(name, login) || !ValidDumpKey(key) || password == "" {
		return 0, errors.New("managed: dump: invalid name or key")
	}
	u, err := url.Parse(d.AdminURL)
	if err != nil {
		return 0, fmt.Errorf("managed: dump: %w", err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return 0, fmt.Errorf("managed: dump: cluster address: %w", err)
	}
	dst := filepath.Join(d.Objects, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".dump-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	// Without owners and grants: the dump restores into any database as any role, as a
	// customer's pg_restore or our own restore needs.
	// As the provisioning role acting as the database's login (--role: SET ROLE), so the
	// zone's statement watchdog (watchdog.go), which ends long statements of customer
	// logins, leaves a long dump alone.
	admin := u.User.Username()
	adminPassword, _ := u.User.Password()
	cmd := exec.CommandContext(ctx, d.Bin, "--format=custom", "--no-owner", "--no-privileges",
		"--host", host, "--port", port, "--username", admin, "--role", login, "--dbname", name)
	cmd.Env = []string{"PGPASSWORD=" + adminPassword, "PGSSLMODE=disable", "PATH=/usr/bin:/bin"}
	cmd.Stdout = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	closeErr := tmp.Close()
	if runErr != nil {
		return 0, fmt.Errorf("managed: pg_dump %s: %v: %s", name, runErr, bytes.TrimSpace(stderr.Bytes()))
	}
	if closeErr != nil {
		return 0, closeErr
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Restore loads the dump at key into database name as its own role, in one transaction
// (pg_restore --single-transaction --exit-on-error): the database holds all of it or none.
func (d Dumper) Restore(ctx context.Context, name, password, key string) error {
	if !ValidName(name) || !ValidDumpKey(key) || password == "" {
		return errors.New("managed: restore: invalid name or key")
	}
	u, err := url.Parse(d.AdminURL)
	if err != nil {
		return fmt.Errorf("managed: restore: %w", err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("managed: restore: cluster address: %w", err)
	}
	// As the provisioning role acting as the database's owner, as for a dump: what it makes
	// is the owner's.
	admin := u.User.Username()
	adminPassword, _ := u.User.Password()
	cmd := exec.CommandContext(ctx, d.RestoreBin, "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error",
		"--host", host, "--port", port, "--username", admin, "--role", name, "--dbname", name, filepath.Join(d.Objects, filepath.FromSlash(key)))
	cmd.Env = []string{"PGPASSWORD=" + adminPassword, "PGSSLMODE=disable", "PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("managed: pg_restore %s: %v: %s", name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}
