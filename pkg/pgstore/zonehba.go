package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/contract/names"
)

// The zone cluster's pg_hba.conf lets each login reach one database: a section between two
// marker lines (scripts/zone-postgres.sh writes them, with the file's fixed head and tail
// around) is regenerated from the cluster's catalog whenever a database or a provisioning
// role comes or goes. Postgres 15 has no include_dir for pg_hba and several zone agents (each
// e2e stack's) may share one cluster, so the whole section is rebuilt from the catalog under
// a file lock, never edited line by line. Names, never membership (+role, samerole): a login
// that gained a foreign role passes a membership rule, never a name it does not have.
//
// scripts/zone-postgres.sh builds the same section with one SQL query when it migrates a
// cluster; the two must write the same lines (zoneHBALines).

// The section's marker lines.
const (
	ZoneHBABegin = "# BEGIN tori zone: one line per database naming its two logins; regenerated from the catalog, edits here are lost"
	ZoneHBAEnd   = "# END tori zone"
)

// ErrZoneHBAUnmanaged: the cluster's pg_hba.conf has no zone section (a cluster the
// operator keeps, or one made before the section by an older scripts/zone-postgres.sh).
var ErrZoneHBAUnmanaged = errors.New("pgstore: the zone cluster's pg_hba.conf has no zone section")

// ErrZoneHBANotLocal: the superuser URL is not the cluster's Unix socket, so its files are
// not this host's to write.
var ErrZoneHBANotLocal = errors.New("pgstore: the zone cluster is not reached over its Unix socket")

var (
	managedDatabase = regexp.MustCompile(names.DatabaseNamePattern)
	plainRole       = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
)

// zoneHBALines is the section's body: the provisioning roles (by name) to the maintenance
// database over TCP, then each managed database to its owner and second login, over the
// Unix socket (the zone's dumps and restores) and over TCP (the pooler).
func zoneHBALines(provisioners, databases []string) []string {
	var lines []string
	for _, p := range provisioners {
		for _, addr := range []string{"127.0.0.1/32", "::1/128"} {
			lines = append(lines, fmt.Sprintf(`host postgres "%s" %s scram-sha-256`, p, addr))
		}
	}
	for _, d := range databases {
		lines = append(lines, fmt.Sprintf(`local "%s" "%s","%s_b" scram-sha-256`, d, d, d))
		for _, addr := range []string{"127.0.0.1/32", "::1/128"} {
			lines = append(lines, fmt.Sprintf(`host "%s" "%s","%s_b" %s scram-sha-256`, d, d, d, addr))
		}
	}
	return lines
}

// replaceZoneSection puts lines between the markers of hba; false when it has none.
func replaceZoneSection(hba string, lines []string) (string, bool) {
	begin := strings.Index(hba, ZoneHBABegin+"\n")
	end := strings.Index(hba, "\n"+ZoneHBAEnd+"\n")
	if begin < 0 || end < begin {
		return "", false
	}
	body := ""
	if len(lines) > 0 {
		body = strings.Join(lines, "\n") + "\n"
	}
	head := hba[:begin+len(ZoneHBABegin)+1]
	return head + body + hba[end+1:], true
}

// KeepZoneHBA rebuilds the zone section of the cluster's pg_hba.conf from its catalog and
// has the cluster load it, returning once new connections follow it. superURL is the
// cluster's superuser over its Unix socket (peer as postgres, as root on the cluster's host).
// Safe to run from several processes at once: the last to take the lock reads the newest
// catalog.
func KeepZoneHBA(ctx context.Context, superURL string) error {
	cfg, err := pgx.ParseConfig(superURL)
	if err != nil {
		return fmt.Errorf("pgstore: zone cluster superuser URL: %w", err)
	}
	if !strings.HasPrefix(cfg.Host, "/") {
		return ErrZoneHBANotLocal
	}
	if _, err := os.Stat(filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port))); err != nil {
		// No such socket here: the cluster runs elsewhere (another container, another host).
		return ErrZoneHBANotLocal
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pgstore: connect to the zone cluster as its superuser: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var path string
	if err := conn.QueryRow(ctx, "SHOW hba_file").Scan(&path); err != nil {
		return fmt.Errorf("pgstore: where pg_hba.conf is: %w", err)
	}
	// A file that is not the zone's is left as it is, no lock file beside it either.
	if err := hasZoneSection(path); err != nil {
		return err
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("pgstore: read pg_hba.conf: %w", err)
	}
	provisioners, databases, err := zoneHBANames(ctx, conn)
	if err != nil {
		return err
	}
	next, ok := replaceZoneSection(string(old), zoneHBALines(provisioners, databases))
	if !ok {
		return ErrZoneHBAUnmanaged
	}
	if err := replaceFile(path, []byte(next)); err != nil {
		return err
	}
	// The cluster parses the file as it will on reload; a file it would refuse is put back.
	var bad int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_hba_file_rules WHERE error IS NOT NULL").Scan(&bad); err != nil || bad > 0 {
		if rerr := replaceFile(path, old); rerr != nil {
			return errors.Join(err, rerr)
		}
		return fmt.Errorf("pgstore: the regenerated pg_hba.conf has %d bad lines (%v): kept the old one", bad, err)
	}
	return reloadHBA(ctx, conn, cfg)
}

// hasZoneSection is nil when the file at path has the zone's section.
func hasZoneSection(path string) error {
	body, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ErrZoneHBANotLocal
	} else if err != nil {
		return fmt.Errorf("pgstore: read pg_hba.conf: %w", err)
	}
	if _, ok := replaceZoneSection(string(body), nil); !ok {
		return ErrZoneHBAUnmanaged
	}
	return nil
}

// zoneHBANames are the provisioning roles (non-superuser logins that may create roles) and
// the managed databases, each sorted.
func zoneHBANames(ctx context.Context, conn *pgx.Conn) (provisioners, databases []string, err error) {
	rows, err := conn.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolcanlogin AND rolcreaterole AND NOT rolsuper`)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: provisioning roles: %w", err)
	}
	roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: provisioning roles: %w", err)
	}
	for _, r := range roles {
		// A managed database's login is never a provisioner, whatever it was given.
		if plainRole.MatchString(r) && !strings.HasPrefix(r, "db_") {
			provisioners = append(provisioners, r)
		}
	}
	rows, err = conn.Query(ctx, `SELECT datname FROM pg_database`)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: databases: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: databases: %w", err)
	}
	for _, d := range names {
		if managedDatabase.MatchString(d) {
			databases = append(databases, d)
		}
	}
	sort.Strings(provisioners)
	sort.Strings(databases)
	return provisioners, databases, nil
}

// reloadHBA has the postmaster reload its files and waits until a new backend carries a
// load time after the file was written: the postmaster reloads in one go before it forks
// again, so from then on every new connection is checked against the new lines.
func reloadHBA(ctx context.Context, conn *pgx.Conn, cfg *pgx.ConnConfig) error {
	var written time.Time
	if err := conn.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&written); err != nil {
		return fmt.Errorf("pgstore: reload pg_hba.conf: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("pgstore: reload pg_hba.conf: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		fresh, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("pgstore: reload pg_hba.conf: %w", err)
		}
		var loaded bool
		err = fresh.QueryRow(ctx, "SELECT pg_conf_load_time() >= $1", written).Scan(&loaded)
		fresh.Close(ctx)
		if err != nil {
			return fmt.Errorf("pgstore: reload pg_hba.conf: %w", err)
		}
		if loaded {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("pgstore: the zone cluster did not reload pg_hba.conf")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lockFile takes an exclusive lock on path (made if missing) until unlock.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgstore: lock pg_hba.conf: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("pgstore: lock pg_hba.conf: %w", err)
	}
	return func() { f.Close() }, nil
}

// replaceFile writes body to path in one rename, keeping its owner and mode: the cluster
// never reads half a file.
func replaceFile(path string, body []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("pgstore: write pg_hba.conf: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pg_hba.conf.*")
	if err != nil {
		return fmt.Errorf("pgstore: write pg_hba.conf: %w", err)
	}
	defer os.Remove(tmp.Name())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if err := tmp.Chown(int(st.Uid), int(st.Gid)); err != nil {
			tmp.Close()
			return fmt.Errorf("pgstore: write pg_hba.conf: %w", err)
		}
	}
	_, err = tmp.Write(body)
	if err == nil {
		err = tmp.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("pgstore: write pg_hba.conf: %w", err)
	}
	return nil
}
