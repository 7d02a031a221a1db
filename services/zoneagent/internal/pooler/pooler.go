// Package pooler supervises the zone's PgBouncer (its files, its process, its admin
// console) and keeps its record: every database's password and pool (pooler.go, logins.go),
// and each one's cap for the size check (caps.go; the rule itself is internal/sizecap). The
// cluster side of the zone's databases is internal/managed.
package pooler

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"tori.dev/services/zoneagent/internal/managed"
)

// adminUser is the pooler's admin console user, whose password only the agent knows.
const adminUser = "tori_pooler_admin"

// Pooler runs PgBouncer in transaction mode in front of the zone's cluster and keeps its
// files: the configuration (one pool per database, its size the plan's connections), the
// auth file, which holds each database role's password and is the zone's only record of it,
// and the HBA file, which admits each login to its own database only (hba.go).
// Adding or removing a database rewrites them and reloads the running pooler online
// (RELOAD on its admin console); connections in flight to other databases are untouched.
type Pooler struct {
	Bin string // pgbouncer
	// Dir keeps the pooler's record (every database's password), mode 0700: DATA_DIR/pooler.
	Dir string
	// RuntimeDir holds what PgBouncer reads (its configuration, auth and HBA files), mode 0700,
	// owned by RunAs: PgBouncer rereads them after dropping root, and may not be able to reach
	// into Dir. Written from the record at every start and change; Dir when empty.
	RuntimeDir string
	Listen     string // host:port it listens on (ZONE_POOLER_ADDR)
	// Cluster is host:port of the zone's managed-database cluster.
	Cluster string
	// QueryWaitTimeout is how long a transaction waits for a server connection when the
	// database's pool is full before it fails (PgBouncer's query_wait_timeout).
	QueryWaitTimeout time.Duration
	// RunAs is the OS user PgBouncer is started as when the agent is root (it refuses to
	// run as root); empty otherwise.
	RunAs string
	Log   *slog.Logger

	mu    sync.Mutex
	state poolerState
}

type poolerState struct {
	AdminPassword string                  `json:"adminPassword"`
	Databases     map[string]pooledDBFile `json:"databases"`
}

type pooledDBFile struct {
	// Login is who Password logs in as (logins.go): the database's own name when empty.
	Login    string `json:"login,omitempty"`
	Password string `json:"password"`
	// OldLogin and OldPassword: the login a rotation moved from, admitted until retired.
	OldLogin    string `json:"oldLogin,omitempty"`
	OldPassword string `json:"oldPassword,omitempty"`
	// Rotation is the id of the rotate command last applied, so a redelivery rotates no more.
	Rotation string `json:"rotation,omitempty"`
	PoolSize int    `json:"poolSize"`
	// What the size check needs: whose database it is, its cap, and whether it was made
	// read-only for being over it.
	DatabaseID string `json:"databaseId,omitempty"`
	AppID      string `json:"appId,omitempty"`
	MaxBytes   int64  `json:"maxBytes,omitempty"`
	ReadOnly   bool   `json:"readOnly,omitempty"`
}

// Reconnect makes the pooler renew its server connections to database name (each as soon as
// its transaction ends), so a changed database setting reaches every new transaction.
func (p *Pooler) Reconnect(ctx context.Context, name string) error {
	if !managed.ValidName(name) {
		return fmt.Errorf("managed: reconnect %q: invalid name", name)
	}
	conn, err := p.admin(ctx)
	if err != nil {
		return fmt.Errorf("managed: pooler admin console: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "RECONNECT "+name); err != nil {
		return fmt.Errorf("managed: pooler reconnect %s: %w", name, err)
	}
	return nil
}

func (p *Pooler) statePath() string { return filepath.Join(p.Dir, "state.json") }

// Open reads the pooler's record (creating it the first time) and writes its files.
func (p *Pooler) Open() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.RuntimeDir == "" {
		p.RuntimeDir = p.Dir
	}
	for _, d := range []string{p.Dir, p.RuntimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("managed: pooler dir: %w", err)
		}
	}
	if p.RunAs != "" && p.RuntimeDir != p.Dir {
		if err := chownTo(p.RuntimeDir, p.RunAs); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(p.statePath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.state = poolerState{AdminPassword: NewPassword(), Databases: map[string]pooledDBFile{}}
	case err != nil:
		return fmt.Errorf("managed: pooler state: %w", err)
	default:
		if err := json.Unmarshal(b, &p.state); err != nil {
			return fmt.Errorf("managed: pooler state: %w", err)
		}
		if p.state.Databases == nil {
			p.state.Databases = map[string]pooledDBFile{}
		}
	}
	return p.writeFiles()
}

// Password is the role's password of database name, when the pooler admits it.
func (p *Pooler) Password(name string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.state.Databases[name]
	return d.Password, ok
}

// Admit adds (or updates) database name with its role's password and pool size and reloads
// the running pooler.
func (p *Pooler) Admit(ctx context.Context, name, password string, poolSize int) error {
	if !managed.ValidName(name) || password == "" || poolSize < 1 {
		return fmt.Errorf("managed: admit %q: invalid name, password or pool size", name)
	}
	p.mu.Lock()
	d := p.state.Databases[name]
	d.Password, d.PoolSize = password, poolSize
	p.state.Databases[name] = d
	err := p.writeFiles()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return p.reload(ctx)
}

// Remove stops admitting database name and reloads the running pooler.
func (p *Pooler) Remove(ctx context.Context, name string) error {
	p.mu.Lock()
	_, had := p.state.Databases[name]
	delete(p.state.Databases, name)
	err := p.writeFiles()
	p.mu.Unlock()
	if err != nil || !had {
		return err
	}
	return p.reload(ctx)
}

// Run starts PgBouncer and keeps it until ctx ends; it returns an error when PgBouncer
// stops on its own, so the zone stops with its pooler rather than limp on without it.
func (p *Pooler) Run(ctx context.Context) error {
	cmd := exec.Command(p.Bin, filepath.Join(p.RuntimeDir, "pgbouncer.ini"))
	// A fixed environment: nothing of the agent's (its database URLs, keys) reaches it.
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	// Killed with the agent, even by SIGKILL, so a restarted agent finds its port free.
	// Started as RunAs rather than told to drop root itself: a process changing its own
	// user loses its parent-death signal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if p.RunAs != "" {
		uid, gid, err := managed.LookupUser(p.RunAs)
		if err != nil {
			return err
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = cmd.Stderr
	raiseOpenFiles()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("managed: start pgbouncer: %w", err)
	}
	go p.logLines(ctx, out)
	// What PgBouncer reads holds every password: it goes when PgBouncer does, and is
	// written again from the record at the next start.
	if p.RuntimeDir != p.Dir {
		defer os.RemoveAll(p.RuntimeDir)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGINT) // PgBouncer's "safe shutdown"
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil
	case err := <-exited:
		return fmt.Errorf("managed: pgbouncer exited: %v", err)
	}
}

func (p *Pooler) logLines(ctx context.Context, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.Log.InfoContext(ctx, "pooler", "line", sc.Text())
	}
}

// Ready waits until the pooler's admin console answers.
func (p *Pooler) Ready(ctx context.Context) error {
	for {
		conn, err := p.admin(ctx)
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("managed: pooler on %s does not answer: %w", p.Listen, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *Pooler) admin(ctx context.Context) (*pgx.Conn, error) {
	p.mu.Lock()
	pw := p.state.AdminPassword
	p.mu.Unlock()
	u := url.URL{Scheme: "postgres", User: url.UserPassword(adminUser, pw), Host: p.Listen, Path: "/pgbouncer",
		RawQuery: "sslmode=disable&default_query_exec_mode=simple_protocol"}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// reload makes the running pooler reread its files. A pooler not running yet reads them
// when it starts.
func (p *Pooler) reload(ctx context.Context) error {
	conn, err := p.admin(ctx)
	if err != nil {
		return fmt.Errorf("managed: pooler admin console: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "RELOAD"); err != nil {
		return fmt.Errorf("managed: pooler reload: %w", err)
	}
	return nil
}

// NewPassword is 128 random bits in hex: safe in a URL, the auth file and SQL.
func NewPassword() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// maxClients is PgBouncer's max_client_conn: the caps of every app with a database, the
// other apps' together, and room for the zone's own console. p.mu is held.
func (p *Pooler) maxClients() int {
	n := managed.OtherAppsClients + 100
	for _, d := range p.state.Databases {
		n += managed.ClientCap(d.PoolSize)
	}
	return n
}

// raiseOpenFiles lets PgBouncer hold as many sockets as the host allows (the hard limit),
// far more than the soft limit a service is often started with (1024). Go raises its own
// soft limit at start but gives children the original back, unless the program sets the
// limit itself: so the agent sets it (to what it already has), and PgBouncer, started next,
// inherits it. (prlimit on the running child would need CAP_SYS_RESOURCE, as it runs as
// another user.) Best effort: PgBouncer refuses clients past its limit either way.
func raiseOpenFiles() {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim.Cur, Max: lim.Max})
	}
}
