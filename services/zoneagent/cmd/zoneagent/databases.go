package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/objectstore"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/dbhelper"
	"tori.dev/services/zoneagent/internal/managed"
	"tori.dev/services/zoneagent/internal/pooler"
	"tori.dev/services/zoneagent/internal/usecase"
)

// databasesNotHosted are the zone's managed-database use cases when it hosts none
// (no ZONE_POSTGRES_ADMIN_URL): every command is answered with failed.
func databasesNotHosted(cfg config.Config, st usecase.Store, log *slog.Logger) (*usecase.Databases, error) {
	host, portText, err := net.SplitHostPort(cfg.Pooler())
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portText)
	return &usecase.Databases{
		Zone: cfg.Zone, Host: sandboxHost(host), Port: port, Store: st, CapOverride: cfg.CapOverride,
		NewPassword: pooler.NewPassword, OtherLogin: managed.OtherLogin, Now: time.Now, Log: log,
	}, nil
}

// managedDatabases builds the database host's use cases and the pooler it runs, over the
// root helper's steps (ceilings when it has them, the cluster's pg_hba.conf).
func managedDatabases(cfg config.Config, st usecase.Store, helper dbhelper.Client, ceilings bool, log *slog.Logger) (*usecase.Databases, *pooler.Pooler, error) {
	dbs, err := databasesNotHosted(cfg, st, log)
	if err != nil {
		return nil, nil, err
	}
	// PgBouncer runs as the host's own user; its files are in the host's folder.
	p := &pooler.Pooler{
		Bin: cfg.PoolerBin, Dir: filepath.Join(cfg.DatabasesDir, "pooler"), Listen: cfg.Pooler(),
		Cluster: cfg.ClusterAddr(), QueryWaitTimeout: cfg.QueryWaitTimeout, Log: log.With("component", "pooler"),
	}
	if err := p.Open(); err != nil {
		return nil, nil, err
	}
	cluster := managed.Cluster{AdminURL: cfg.PostgresAdminURL, StatementTimeout: cfg.StatementTimeout, Access: helper}
	keepAccess(cluster, log)
	if ceilings {
		cluster.Ceilings = helper
		// A reboot unmounts them: until they are back their databases cannot be read.
		caps := map[string]int64{}
		for _, t := range p.Tracked() {
			caps[t.Name] = dbs.Cap(t.MaxBytes)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := helper.Remount(ctx, caps); err != nil {
			// Those databases stay unreachable (their files are not there); the others serve.
			log.Error("some databases' filesystems could not be mounted", "err", err.Error())
		}
	} else {
		log.Error("managed databases have no hard ceiling under their cap: it needs root and e2fsprogs (mkfs.ext4, resize2fs)")
	}
	dbs.Cluster = cluster
	dbs.Pooler = p
	dbs.Sizes = sizeWatch{cluster, p}
	dumps, err := dumper(cfg)
	if err != nil {
		return nil, nil, err
	}
	dbs.Dumps = dumps
	return dbs, p, nil
}

// dumper keeps the zone's dumps in its own bucket, with its own credentials; download URLs
// name the store's public address.
func dumper(cfg config.Config) (managed.Dumper, error) {
	bucket, err := objectstore.New(cfg.ObjectStoreConfig())
	if err != nil {
		return managed.Dumper{}, err
	}
	presigner, err := objectstore.New(cfg.DumpPresignConfig())
	if err != nil {
		return managed.Dumper{}, err
	}
	return managed.Dumper{Bin: cfg.PgDump, RestoreBin: cfg.PgRestore, AdminURL: cfg.PostgresAdminURL,
		Socket: clusterSocket(cfg.Tablespaces()), Bucket: bucket, Presigner: presigner, URLLifetime: cfg.DumpURLLifetime}, nil
}

// clusterSocket is the directory of the cluster's Unix socket superURL names, "" when it
// names none (a cluster on another host).
func clusterSocket(superURL string) string {
	c, err := pgconn.ParseConfig(superURL)
	if err != nil || !strings.HasPrefix(c.Host, "/") {
		return ""
	}
	return c.Host
}

// keepAccess brings the cluster's pg_hba.conf section up to date at start (a database made
// or dropped while the agent was down), or says plainly that it is not the zone's to keep.
func keepAccess(cluster managed.Cluster, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cluster.KeepAccess(ctx)
	switch {
	case errors.Is(err, managed.ErrAccessUnmanaged):
		log.Error("the zone cluster's pg_hba.conf is not kept by the zone: unless its operator names each database's logins, a login that gains another database's role may connect to it (scripts/zone-postgres.sh sets the section up)", "err", err.Error())
	case err != nil:
		log.Error("the zone cluster's pg_hba.conf could not be brought up to date", "err", err.Error())
	}
}

// databaseCeilings is the hard ceiling under every database's cap (managed/ceiling.go): it
// mounts filesystems, so it needs root and e2fsprogs; without them the soft cap alone holds,
// and the database host says so. The root helper's.
func databaseCeilings(cfg config.Config, log *slog.Logger) *managed.Ceilings {
	mkfs, err1 := exec.LookPath("mkfs.ext4")
	resize, err2 := exec.LookPath("resize2fs")
	if os.Geteuid() != 0 || err1 != nil || err2 != nil {
		return nil
	}
	images := cfg.DiskImagesDir
	if images == "" {
		images = filepath.Join(cfg.DataDir, "database-disks")
	}
	mounts := cfg.MountsDir
	if mounts == "" {
		abs, _ := filepath.Abs(cfg.DataDir)
		sum := sha256.Sum256([]byte(abs + "\x00" + cfg.Zone))
		mounts = filepath.Join("/var/lib/tori", "zone-"+cfg.Zone+"-"+hex.EncodeToString(sum[:6]))
	}
	return &managed.Ceilings{ImagesDir: images, MountsDir: mounts, SuperURL: cfg.Tablespaces(),
		Owner: cfg.ClusterUser, Mkfs: mkfs, Resize: resize, Log: log.With("component", "database ceilings")}
}

// statementWatchdog is the zone's job that holds customer logins to the contract's statement
// limit and ends transactions left idle (managed/watchdog.go).
func statementWatchdog(cfg config.Config) lifecycle.Job {
	w := managed.Watchdog{AdminURL: cfg.PostgresAdminURL, StatementLimit: cfg.StatementTimeout, IdleLimit: cfg.IdleInTransactionTimeout}
	return lifecycle.Job{Name: "database statements", Every: cfg.StatementCheckInterval, Run: w.Run}
}

// sizeWatch is the size check's view of the cluster (sizes, the read-only setting) and the
// pooler (its record, RECONNECT).
type sizeWatch struct {
	managed.Cluster
	*pooler.Pooler
}

// sandboxHost is the pooler's host as an app's sandbox reaches it: the sandbox's own
// loopback forwards the pooler's port, so a listener on any loopback address is 127.0.0.1.
func sandboxHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
		return "127.0.0.1"
	}
	return host
}

// awaitPooler runs the pooler and returns once it answers, or with its error.
func awaitPooler(ctx context.Context, p *pooler.Pooler) error {
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return p.Ready(rctx)
}

// ceilingWatch is the zone's fast job over the databases' filesystems (managed/
// crashreserve.go, through the root helper): each keeps its crash reserve, and a checkpoint
// follows any owner's large free, so what recovery may have to write again always fits. None
// without ceilings.
func ceilingWatch(cfg config.Config, dbs *usecase.Databases, pool *pooler.Pooler, helper dbhelper.Client) (lifecycle.Job, bool) {
	sizes, ok := dbs.Sizes.(sizeWatch)
	if !ok || sizes.Cluster.Ceilings == nil {
		return lifecycle.Job{}, false
	}
	return lifecycle.Job{Name: "database ceilings", Every: cfg.CeilingCheckInterval, Run: func(ctx context.Context) (int64, error) {
		caps := map[string]int64{}
		for _, t := range pool.Tracked() {
			caps[t.Name] = dbs.Cap(t.MaxBytes)
		}
		return helper.WatchAll(ctx, caps)
	}}, true
}
