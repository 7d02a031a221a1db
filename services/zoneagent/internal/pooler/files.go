package pooler

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/managed"
)

// PgBouncer's files, written from the pooler's record: its configuration, the auth file and
// the HBA file (hba.go).

// writeFiles writes the record, the configuration, the auth file and the HBA file, each
// through a temporary file so PgBouncer never reads half of one. Between two of them a
// reload may read a new auth file with the old HBA file: a login either lacks lets nobody
// in, and no HBA file names a login for another database, so no mix admits more. p.mu is
// held.
func (p *Pooler) writeFiles() error {
	host, port, err := net.SplitHostPort(p.Listen)
	if err != nil {
		return fmt.Errorf("managed: pooler address %q: %w", p.Listen, err)
	}
	chost, cport, err := net.SplitHostPort(p.Cluster)
	if err != nil {
		return fmt.Errorf("managed: cluster address %q: %w", p.Cluster, err)
	}
	state, err := json.Marshal(p.state)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(p.state.Databases))
	for n := range p.state.Databases {
		names = append(names, n)
	}
	sort.Strings(names)
	var ini, users strings.Builder
	ini.WriteString("; Written by the zone agent (internal/managed); rewritten on every change.\n[databases]\n")
	fmt.Fprintf(&users, "%q %q\n", adminUser, p.state.AdminPassword)
	for _, n := range names {
		d := p.state.Databases[n]
		fmt.Fprintf(&ini, "%s = host=%s port=%s dbname=%s pool_size=%d max_db_connections=%d\n", n, chost, cport, n, d.PoolSize, d.PoolSize)
		fmt.Fprintf(&users, "%q %q\n", d.login(n), d.Password)
		if d.OldLogin != "" && d.OldLogin != d.login(n) {
			fmt.Fprintf(&users, "%q %q\n", d.OldLogin, d.OldPassword)
		}
	}
	ini.WriteString("\n[pgbouncer]\n")
	for _, kv := range [][2]string{
		{"listen_addr", host},
		{"listen_port", port},
		{"unix_socket_dir", ""},
		// Who may log in (auth_file) and to which database (auth_hba_file, hba.go).
		{"auth_type", "hba"},
		{"auth_hba_file", filepath.Join(p.RuntimeDir, "hba.txt")},
		{"auth_file", filepath.Join(p.RuntimeDir, "users.txt")},
		{"admin_users", adminUser},
		{"pool_mode", "transaction"},
		// Every app's cap and the others' together fit (clientcaps.go).
		{"max_client_conn", strconv.Itoa(p.maxClients())},
		// An app may open its whole cap at once; with PgBouncer's default backlog of 128 the
		// kernel holds the rest half-open, retrying for seconds, before PgBouncer sees them.
		{"listen_backlog", "4096"},
		{"default_pool_size", "1"},
		{"query_wait_timeout", strconv.Itoa(max(1, int(p.QueryWaitTimeout/time.Second)))},
		// Session state does not outlive a transaction in this mode; nothing to reset.
		{"server_reset_query", ""},
		{"ignore_startup_parameters", "extra_float_digits,search_path"},
		{"log_connections", "0"},
		{"log_disconnections", "0"},
	} {
		fmt.Fprintf(&ini, "%s = %s\n", kv[0], kv[1])
	}
	if err := p.writeFile(p.Dir, "state.json", state, ""); err != nil {
		return err
	}
	if err := p.writeFile(p.RuntimeDir, "users.txt", []byte(users.String()), p.RunAs); err != nil {
		return err
	}
	if err := p.writeFile(p.RuntimeDir, "hba.txt", []byte(p.hbaFile(names)), p.RunAs); err != nil {
		return err
	}
	return p.writeFile(p.RuntimeDir, "pgbouncer.ini", []byte(ini.String()), p.RunAs)
}

func (p *Pooler) writeFile(dir, name string, body []byte, owner string) error {
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// PgBouncer, once it has dropped root, rereads its files as RunAs.
	if owner != "" {
		if err := chownTo(tmp.Name(), owner); err != nil {
			return err
		}
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

func chownTo(path, name string) error {
	uid, gid, err := managed.LookupUser(name)
	if err != nil {
		return err
	}
	return os.Chown(path, int(uid), int(gid))
}
