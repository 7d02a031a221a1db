package config

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	"tori.dev/pkg/objectstore"
)

// ManagedDatabases are the zone's managed-database settings (decisions.md, "Managed
// database"). Without ZONE_POSTGRES_ADMIN_URL the zone hosts none: it answers every create
// command with failed.
type ManagedDatabases struct {
	// PostgresAdminURL is the zone's provisioning role on its own cluster (LOGIN CREATEDB
	// CREATEROLE, never a superuser), written by bin/bootstrap to this agent's file alone.
	PostgresAdminURL string `env:"ZONE_POSTGRES_ADMIN_URL" secret:"true"`
	// PoolerAddr is where PgBouncer listens; empty: 127.0.0.1 and ZONE_POOLER_PORT, the port
	// an app's sandbox may reach.
	PoolerAddr string `env:"ZONE_POOLER_ADDR"`
	PoolerBin  string `env:"ZONE_POOLER_BIN, default=pgbouncer"`
	// DatabasesUser is the OS user the database host (cmd/zoneagent databases: the cluster's
	// provisioning, the pooler, ceilings, dumps) runs as when the agent is root: neither root
	// nor the cluster's; scripts/ensure-services.sh makes it. PgBouncer runs as it too.
	DatabasesUser string `env:"ZONE_DATABASES_USER, default=tori-dbhost"`
	// DatabasesHealthAddr serves the database host's /healthz and /readyz; the agent's
	// /readyz waits for it. Unset: a free loopback port the agent picks and hands the host
	// (make run sets 127.0.0.1:8109).
	DatabasesHealthAddr string `env:"ZONE_DATABASES_HEALTH_ADDR"`
	// DatabasesDir is the database host's own folder (the pooler's record and files), its
	// user's alone; empty: /var/lib/tori/dbhost-<zone>-<hash of DATA_DIR> (DATA_DIR/dbhost when
	// the agent is not root).
	DatabasesDir string `env:"ZONE_DATABASES_DIR"`
	// QueryWaitTimeout: a transaction past a database's pool waits this long, then fails.
	QueryWaitTimeout time.Duration `env:"ZONE_POOLER_QUERY_WAIT_TIMEOUT, default=120s"`
	// StatementTimeout cancels a statement running longer (60 s by the contract; tests
	// shorten it).
	StatementTimeout time.Duration `env:"DATABASE_STATEMENT_TIMEOUT, default=60s"`
	// SizeCheckInterval spaces the measures of every database against its cap.
	SizeCheckInterval time.Duration `env:"DATABASE_SIZE_CHECK_INTERVAL, default=1m"`
	// CeilingCheckInterval spaces the watch of every database's filesystem (its crash
	// reserve kept, a checkpoint asked for once the owner freed room: managed/crashreserve.go).
	CeilingCheckInterval time.Duration `env:"DATABASE_CEILING_CHECK_INTERVAL, default=1s"`
	// CapOverride, for tests only, lowers every database's cap to this many bytes (0: the
	// plan's databaseBytes), so the cap is reached with a few megabytes.
	CapOverride int64 `env:"ZONE_DATABASE_MAX_BYTES_OVERRIDE, default=0"`
	// DiskImagesDir holds each database's filesystem image (the hard ceiling under its cap);
	// empty: DATA_DIR/database-disks. MountsDir is where they are mounted, a folder the
	// cluster's OS user can reach; empty: /var/lib/tori/zone-<zone>-<hash of DATA_DIR>.
	DiskImagesDir string `env:"ZONE_DATABASE_DISKS_DIR"`
	MountsDir     string `env:"ZONE_DATABASE_MOUNTS_DIR"`
	// ClusterUser is the OS user the cluster runs as: each tablespace's folder is its.
	ClusterUser string `env:"ZONE_POSTGRES_OS_USER, default=postgres"`
	// TablespaceURL is the cluster's superuser over its Unix socket (peer: root logs in as
	// postgres), used to create each database's tablespace and to keep the zone section of
	// the cluster's pg_hba.conf; dumps connect to its socket directory. Empty: postgres at
	// /var/run/postgresql on ZONE_POSTGRES_ADMIN_URL's port.
	TablespaceURL string `env:"ZONE_POSTGRES_TABLESPACE_URL" secret:"true"`
	// StatementCheckInterval spaces the zone's own enforcement of the statement limit and of
	// IdleInTransactionTimeout (a role may change its own statement_timeout).
	StatementCheckInterval   time.Duration `env:"DATABASE_STATEMENT_CHECK_INTERVAL, default=5s"`
	IdleInTransactionTimeout time.Duration `env:"DATABASE_IDLE_IN_TRANSACTION_TIMEOUT, default=5m"`
	// PgDump is the pg_dump binary the zone dumps databases with.
	PgDump    string `env:"ZONE_PG_DUMP, default=pg_dump"`
	PgRestore string `env:"ZONE_PG_RESTORE, default=pg_restore"`
	// Dumps live in the zone's bucket (ZoneObjectStore). DumpURLLifetime is how long a
	// customer's download URL of one works; ObjectStorePublicURL is the store as a customer
	// reaches it (the URL's host), empty: OBJECT_STORE_URL.
	DumpURLLifetime      time.Duration `env:"ZONE_DUMP_URL_TTL, default=5m"`
	ObjectStorePublicURL string        `env:"OBJECT_STORE_PUBLIC_URL"`
}

// DumpPresignConfig is the zone's bucket as a customer's download URL names it: its own
// credentials, the store's public address.
func (c *Config) DumpPresignConfig() objectstore.Config {
	cfg := c.ObjectStoreConfig()
	if c.ObjectStorePublicURL != "" {
		cfg.URL = c.ObjectStorePublicURL
	}
	return cfg
}

// Enabled reports whether the zone hosts managed databases.
func (m ManagedDatabases) Enabled() bool { return m.PostgresAdminURL != "" }

// Pooler is where PgBouncer listens.
func (c *Config) Pooler() string {
	if c.PoolerAddr != "" {
		return c.PoolerAddr
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.PoolerPort))
}

// ClusterAddr is host:port of the zone's cluster, from ZONE_POSTGRES_ADMIN_URL.
func (m ManagedDatabases) ClusterAddr() string {
	u, err := url.Parse(m.PostgresAdminURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// Tablespaces is the superuser URL over the cluster's socket (tablespaces, pg_hba.conf).
func (m ManagedDatabases) Tablespaces() string {
	if m.TablespaceURL != "" {
		return m.TablespaceURL
	}
	port := "5432"
	if u, err := url.Parse(m.PostgresAdminURL); err == nil && u.Port() != "" {
		port = u.Port()
	}
	return "postgres://postgres@/postgres?host=/var/run/postgresql&port=" + port + "&sslmode=disable"
}

func (c *Config) validateDatabases() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	u, err := url.Parse(c.PostgresAdminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Port() == "" {
		errs = append(errs, errors.New("ZONE_POSTGRES_ADMIN_URL must be a postgres:// URL with host and port (bin/bootstrap writes it)"))
	}
	if _, _, err := net.SplitHostPort(c.DatabasesHealthAddr); (err != nil && c.DatabasesHealthAddr != "") || c.DatabasesUser == "" {
		errs = append(errs, errors.New("ZONE_DATABASES_HEALTH_ADDR must be host:port and ZONE_DATABASES_USER a user"))
	}
	if c.PoolerPort == 0 && c.PoolerAddr == "" {
		errs = append(errs, errors.New("managed databases need the pooler: ZONE_POOLER_PORT or ZONE_POOLER_ADDR"))
	}
	if _, _, err := net.SplitHostPort(c.Pooler()); err != nil {
		errs = append(errs, errors.New("ZONE_POOLER_ADDR must be host:port"))
	}
	if c.StatementCheckInterval <= 0 || c.IdleInTransactionTimeout < time.Second {
		errs = append(errs, errors.New("DATABASE_STATEMENT_CHECK_INTERVAL must be positive and DATABASE_IDLE_IN_TRANSACTION_TIMEOUT at least 1s"))
	}
	// Dumps are written to the zone's bucket (required of every zone: Config.Validate).
	if _, err := objectstore.New(c.DumpPresignConfig()); c.ZoneObjectStore.validate() == nil && err != nil {
		errs = append(errs, errors.New("OBJECT_STORE_PUBLIC_URL must be http(s)://host[:port]"))
	}
	if c.DumpURLLifetime < time.Second || c.DumpURLLifetime > objectstore.MaxPresignLifetime {
		errs = append(errs, errors.New("ZONE_DUMP_URL_TTL must be between 1s and 1h"))
	}
	if c.QueryWaitTimeout < time.Second || c.StatementTimeout < time.Millisecond || c.SizeCheckInterval <= 0 || c.CeilingCheckInterval <= 0 || c.CapOverride < 0 {
		errs = append(errs, errors.New("ZONE_POOLER_QUERY_WAIT_TIMEOUT must be at least 1s, DATABASE_STATEMENT_TIMEOUT and DATABASE_SIZE_CHECK_INTERVAL positive, ZONE_DATABASE_MAX_BYTES_OVERRIDE not negative"))
	}
	return errors.Join(errs...)
}
