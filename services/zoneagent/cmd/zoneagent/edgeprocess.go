package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/profiling"
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgecount"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/edgeproxy"
	"tori.dev/services/zoneagent/internal/runas"
	"tori.dev/services/zoneagent/internal/store"
)

// edgeCommand is the argument the agent re-executes its own binary with to run its edge
// process (edgechild.go): the same binary, so whatever starts bin/zoneagent gets both.
const edgeCommand = "edge"

// The files the agent hands its edge process, by their descriptor there. The edge reaches
// folders only through these (/proc/self/fd/N/...), so it needs no way through the folders
// above them (DATA_DIR, a test's temporary folder) and sees nothing else of them.
const (
	feedFD     = 3 + iota // the table feed: the edge's end of a socket pair
	exeFD                 // the binary, which setpriv executes; closed at once
	tlsDirFD              // DATA_DIR/tls: the local CA
	cacheDirFD            // the site cache's folder
	runDirFD              // the folder of the link's socket
	caRootFD              // ZONE_ACME_CA_ROOT's file (/dev/null when unset)
)

// linkSocket is the link's socket's name in its folder.
const linkSocket = "edge.sock"

// fdPath names a handed folder's descriptor as a path.
func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// asEdgeProcess is set in the edge process: its local CA's folder is the handed one.
var asEdgeProcess bool

// localCADir is DATA_DIR/tls, as this process reaches it.
func localCADir(cfg config.EdgeProcess) string {
	if asEdgeProcess {
		return fdPath(tlsDirFD)
	}
	return filepath.Join(cfg.DataDir, "tls")
}

// readACMERoot is ZONE_ACME_CA_ROOT's file; the edge process reads the descriptor it was
// handed (reopening it would ask the file's permissions of the edge's user).
func readACMERoot(cfg config.EdgeProcess) ([]byte, error) {
	if asEdgeProcess {
		return io.ReadAll(os.NewFile(caRootFD, "ZONE_ACME_CA_ROOT"))
	}
	return os.ReadFile(cfg.ACMECARoot)
}

// edgeGCPercent is the edge process's GOGC unless one is set.
const edgeGCPercent = 400

// runEdgeIfAsked runs the edge process when the binary was started as one, and never
// returns then.
func runEdgeIfAsked() {
	if len(os.Args) < 2 || os.Args[1] != edgeCommand {
		return
	}
	asEdgeProcess = true
	// The edge never outlives its runtime (the feed's end stops it too).
	if err := runas.DieWithParent(0); err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent edge:", err)
		os.Exit(1)
	}
	syscall.Close(exeFD)
	// The edge's live heap is small (the table, buffers, a pool): at Go's default GOGC=100
	// it collected far more often than the one process it was part of, which cost the
	// highest-rate case of bench-edge (small static files) about a quarter of its rate.
	// GOGC set by the operator wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(edgeGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serveEdgeProcess(ctx, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zoneagent edge:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveEdgeProcess is the edge process's composition root: its listeners, certificates,
// site cache and proxy, its own pool on the zone's schema (certificates, their states, app
// log lines into the outbox the runtime relays) and its health server. It reaches services
// only through the link, and learns the routing table only from the feed.
func serveEdgeProcess(ctx context.Context, logs io.Writer) error {
	zone := func(cfg *config.EdgeProcess) []any { return []any{"zone", cfg.Zone} }
	spec := service.Spec[*config.EdgeProcess]{Name: "zoneagent-edge", Version: version, Logs: logs, LogWith: zone}
	return service.Run(ctx, spec, func(ctx context.Context, p *service.Process, cfg *config.EdgeProcess) error {
		// The site cache is the edge's working folder: a cached file is opened by a path
		// relative to it on every request, cheaper than through /proc/self/fd each time.
		if err := syscall.Fchdir(cacheDirFD); err != nil {
			return fmt.Errorf("the site cache's folder: %w", err)
		}
		cfg.CacheDir = "."
		table, log := edge.NewTable(), p.Log
		// The feed is read from the start: the runtime's table writes wait for its acks.
		tableIn, feedDone := p.Health.Await("routing table from the runtime"), make(chan error, 1)
		feed, err := net.FileConn(os.NewFile(feedFD, "table feed"))
		if err != nil {
			return fmt.Errorf("table feed: %w", err)
		}
		go func() { feedDone <- edgelink.Follow(ctx, feed, table, tableIn) }()
		p.Go("table feed", func(ctx context.Context) error {
			select {
			case err := <-feedDone:
				return err
			case <-ctx.Done():
				return nil
			}
		})
		if err := p.OpenPostgres(ctx, cfg.DatabaseURL, store.Service(cfg.Zone, "").Schema); err != nil {
			return err
		}
		st := store.New(p.Pool)
		logLines := busapi.NewLogs(st, log)
		link := edgelink.Client{Path: filepath.Join(fdPath(runDirFD), linkSocket)}
		p.Health.Check("runtime link", func(ctx context.Context) error { return linkReachable(ctx, link.Path) })
		_, siteCache, err := openSites(*cfg)
		if err != nil {
			return err
		}
		previews := cfg.PreviewsDomainFor(cfg.AppsDomain)
		proxy := &edgeproxy.Proxy{Link: link, AppsDomain: cfg.AppsDomain, PreviewsDomain: previews, Logs: logLines, Log: log}
		theEdge := &edge.Edge{Domain: cfg.AppsDomain, PreviewsDomain: previews, Sites: siteCache, Table: table, Services: proxy}
		var counts *edgecount.Counter // the customer's request metrics (README "Metrics")
		if cfg.Counting() {
			counts = &edgecount.Counter{}
			theEdge.Counts = counts
		}
		states := &certificateStates{zone: cfg.Zone, edge: theEdge, store: st, log: log}
		healthApp := httpserver.New(httpserver.Options{Name: "zoneagent-edge", Log: log, WriteTimeout: 10 * time.Second,
			Observe: httpserver.MetricsOnly, Health: &p.Health})
		listenersUp := p.Health.Await("edge listeners")
		if cfg.EdgeHealthAddr == "" {
			return errHealthAddrUnset
		}
		if err := p.ServeHTTP(healthApp, cfg.EdgeHealthAddr, cfg.ShutdownTimeout); err != nil {
			return err
		}
		edges, err := listenEdge(*cfg, p.Pool, theEdge, states, log)
		if err != nil {
			return err
		}
		listenersUp()
		drained := serveEdge(p, edges, cfg.ShutdownTimeout)
		if counts != nil {
			flusher := &edgecount.Flusher{Counter: counts, Zone: cfg.Zone, Interval: cfg.MetricsFlushInterval,
				Publish: busapi.PublishAppMetrics(st), Drained: drained, DrainWait: cfg.ShutdownTimeout + time.Second, Log: log, Now: edge.Now}
			p.Go("app metrics", flusher.Run)
		}
		keepCustomHostnames(p, edges, table) // certstate.go
		p.Go("log batches", logLines.Run)
		p.Go("profiles", func(ctx context.Context) error { return profiling.Serve(ctx, cfg.Profiling, log) })
		p.Listening("edge", edges.Addrs(), "uid", os.Getuid())
		return nil
	})
}

// linkReachable connects to the runtime's link and hangs up without asking (the runtime
// reads that as nothing asked).
func linkReachable(ctx context.Context, path string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return err
	}
	return c.Close()
}
