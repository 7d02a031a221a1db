package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/store"
)

// edgeServers are the edge's listeners: plain HTTP on EDGE_ADDR and, with TLS on, HTTPS on
// EDGE_TLS_ADDR, where plain HTTP then only answers ACME challenges and redirects.
type edgeServers struct {
	servers   []*http.Server
	listeners []net.Listener
	tls       []bool
	certs     *certs.Manager
}

// listenEdge opens the edge's listeners and its certificate manager; states (nil in tests of
// the listeners alone) names hostnames' owners and publishes custom hostnames' certificates.
func listenEdge(cfg config.EdgeProcess, pool *pgxpool.Pool, e *edge.Edge, states *certificateStates, log *slog.Logger) (*edgeServers, error) {
	es := &edgeServers{}
	// A failed handshake (an unknown name, a scanner) is routine at an edge: debug, not noise.
	errorLog := slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	ln, err := net.Listen("tcp", cfg.EdgeAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.EdgeAddr, err)
	}
	plain := edge.NewServer(e)
	plain.ErrorLog = errorLog
	es.add(edge.LimitPerIP(ln, cfg.EdgeMaxConnsPerIP), plain, false)
	if !cfg.TLSEnabled() {
		return es, nil
	}
	m, err := certManager(cfg, pool, e, states, log)
	if err != nil {
		es.close()
		return nil, err
	}
	es.certs = m
	es.servers[0].Handler = edge.Redirect{Edge: e, HTTPSPort: cfg.HTTPSPort(), Challenge: m.HandleHTTPChallenge}
	tln, err := net.Listen("tcp", cfg.TLSAddr)
	if err != nil {
		es.close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.TLSAddr, err)
	}
	srv := edge.NewServer(edge.Secure{Edge: e})
	srv.TLSConfig = m.TLSConfig()
	srv.ErrorLog = errorLog
	es.add(edge.LimitPerIP(tln, cfg.EdgeMaxConnsPerIP), srv, true)
	return es, nil
}

// certManager is certmagic over the zone's storage with the configured issuer: an ACME CA, or
// the zone's local CA made once in DATA_DIR/tls (its root in root.pem, for clients to trust;
// the edge process reaches that folder through the fd the agent hands it: localCADir).
func certManager(cfg config.EdgeProcess, pool *pgxpool.Pool, e *edge.Edge, states *certificateStates, log *slog.Logger) (*certs.Manager, error) {
	key, err := cfg.StorageKeyBytes()
	if err != nil {
		return nil, err
	}
	st, err := store.NewCertStorage(pool, key)
	if err != nil {
		return nil, err
	}
	o := certs.Options{Storage: st, Serves: e.Serves, RenewCheckInterval: cfg.RenewCheckInterval,
		OrdersPerHour: cfg.ACMEOrdersPerHour, NewOrdersPerAccountPerDay: cfg.ACMENewOrdersPerAccountPerDay, Log: log}
	if states != nil {
		o.Owner, o.OnState = states.owner, states.publish
	}
	if e.PreviewsDomain != "" {
		o.PreviewWildcard = "*." + e.PreviewsDomain // certs/previews.go: served only where it can be
	}
	if cfg.ACMECA == "" {
		dir := localCADir(cfg)
		if o.Local, err = certs.LoadOrCreateLocalCA(dir); err != nil {
			return nil, err
		}
		log.Info("edge certificates from the local CA", "root", certs.RootFile(dir))
		if cfg.Wildcard == "local" {
			o.Wildcard = "*." + e.Domain
		}
		return certs.New(o)
	}
	acme := &certs.ACME{Directory: cfg.ACMECA, Email: cfg.ACMEEmail, NoHTTP01: !cfg.Challenge("http-01"), NoTLSALPN01: !cfg.Challenge("tls-alpn-01")}
	if cfg.ACMECARoot != "" {
		pemRoots, err := readACMERoot(cfg)
		if err != nil {
			return nil, fmt.Errorf("ZONE_ACME_CA_ROOT: %w", err)
		}
		acme.Roots = x509.NewCertPool()
		if !acme.Roots.AppendCertsFromPEM(pemRoots) {
			return nil, errors.New("ZONE_ACME_CA_ROOT holds no PEM certificate")
		}
	}
	// Challenges are answered by the edge's own listeners; naming their ports keeps certmagic
	// from opening listeners of its own.
	host, p, _ := net.SplitHostPort(cfg.EdgeAddr)
	acme.ListenHost = host
	acme.HTTPPort, _ = strconv.Atoi(p)
	_, p, _ = net.SplitHostPort(cfg.TLSAddr)
	acme.TLSPort, _ = strconv.Atoi(p)
	o.ACME = acme
	if cfg.Wildcard == "dns01" {
		o.Wildcard, o.DNS01Hook = "*."+e.Domain, cfg.DNS01Hook
	}
	return certs.New(o)
}

func (es *edgeServers) add(ln net.Listener, srv *http.Server, tls bool) {
	es.listeners = append(es.listeners, ln)
	es.servers = append(es.servers, srv)
	es.tls = append(es.tls, tls)
}

func (es *edgeServers) close() {
	for _, ln := range es.listeners {
		ln.Close()
	}
}

// Serve serves every listener until Shutdown; the first failure ends it.
func (es *edgeServers) Serve(context.Context) error {
	errs := make(chan error, len(es.servers))
	for i, srv := range es.servers {
		go func() {
			var err error
			if es.tls[i] {
				err = srv.ServeTLS(es.listeners[i], "", "")
			} else {
				err = srv.Serve(es.listeners[i])
			}
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			errs <- err
		}()
	}
	var first error
	for range es.servers {
		if err := <-errs; err != nil && first == nil {
			first = err
			es.close()
		}
	}
	return first
}

// Shutdown lets in-flight requests finish and stops renewals.
func (es *edgeServers) Shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range es.servers {
		errs = append(errs, srv.Shutdown(ctx))
	}
	if es.certs != nil {
		es.certs.Stop()
	}
	return errors.Join(errs...)
}

// Addrs names the listeners for the start-up log.
func (es *edgeServers) Addrs() []string {
	out := make([]string, len(es.listeners))
	for i, ln := range es.listeners {
		out[i] = ln.Addr().String()
	}
	return out
}
