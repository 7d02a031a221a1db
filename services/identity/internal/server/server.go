// Package server assembles the identity service from its parts (store, bus, mail, use
// cases, HTTP) and runs it until its context ends.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/health"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/identity/internal/app"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/config"
	"tori.dev/services/identity/internal/httpapi"
	"tori.dev/services/identity/internal/mail"
	"tori.dev/services/identity/internal/store"
)

// pruneEvery is how often spent codes, grants and sessions are deleted.
const pruneEvery = 10 * time.Minute

// shutdownGrace bounds how long in-flight requests may finish after a stop signal.
const shutdownGrace = 10 * time.Second

// Server is a ready-to-run identity service.
type Server struct {
	cfg   config.Config
	log   *slog.Logger
	pool  *pgxpool.Pool
	store *store.Store
	conn  *bus.Conn
	http  *fiber.App
	ln    net.Listener
	plans bus.Subscription
}

// New connects to Postgres (creating and migrating the identity schema) and the broker, and
// binds the listening address; Run serves.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, version string) (*Server, error) {
	log.InfoContext(ctx, "starting", "config", pkgconfig.Describe(cfg))
	pool, err := pgstore.Setup(ctx, cfg.DatabaseURL, store.Service(cfg.DBPassword), pgstore.WithMigrations(bus.Migrations, store.Migrations))
	if err != nil {
		return nil, err
	}
	conn, err := bus.Dial(ctx, cfg.Config, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		conn.Close()
		pool.Close()
		return nil, fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		ln.Close()
		conn.Close()
		pool.Close()
		return nil, err
	}
	st := store.New(pool)
	svc := app.New(app.Deps{
		Store:      st,
		Mailer:     mailer,
		Plans:      busapi.BillingClient{Bus: conn},
		Log:        log,
		ConsoleURL: cfg.ConsoleURL,
	})
	id := health.NewIdentity("identity", version)
	h := httpapi.New(httpapi.Config{
		Service:    svc,
		SigningKey: []byte(cfg.SigningKey),
		Log:        log,
		Health:     id,
	})
	// Registered before /readyz is served, so it is never ready with the consumer unbound.
	plans := busapi.PlanConsumer{Repo: store.TxRepo, Log: log}.Subscription()
	plans.Ready = id.Await(plans.Queue)
	return &Server{cfg: cfg, log: log, pool: pool, store: st, conn: conn, http: h, ln: ln, plans: plans}, nil
}

// newMailer picks SMTP when SMTP_URL is set and files under DATA_DIR/mail otherwise.
func newMailer(cfg config.Config, log *slog.Logger) (app.Mailer, error) {
	if cfg.SMTPURL == "" {
		return mail.FileSender{Dir: filepath.Join(cfg.DataDir, "mail"), From: cfg.MailFrom, Log: log, Now: time.Now}, nil
	}
	s, err := config.ParseSMTPURL(cfg.SMTPURL)
	if err != nil {
		return nil, err
	}
	return mail.SMTPSender{Addr: s.Addr, Username: s.Username, Password: s.Password, From: cfg.MailFrom, Log: log, Now: time.Now}, nil
}

// Addr is the address the server listens on (useful when IDENTITY_ADDR names port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Run serves HTTP, relays the outbox, consumes plan changes and prunes old rows until ctx
// ends or one of them fails; then it stops the rest and releases its connections.
func (s *Server) Run(ctx context.Context) error {
	defer s.pool.Close()
	defer s.conn.Close()
	g, ctx := lifecycle.New(ctx)
	g.Go("http", func(context.Context) error { return s.http.Listener(s.ln) })
	g.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := s.http.ShutdownWithTimeout(shutdownGrace); err != nil {
			s.log.Warn("http shutdown", "err", err.Error())
		}
		return nil
	})
	g.Go("outbox relay", bus.NewRelay(s.conn, s.pool, s.log).Run)
	g.Go("plans consumer", func(ctx context.Context) error { return s.conn.Consume(ctx, s.pool, s.plans) })
	g.Go("sign-in pruning", func(ctx context.Context) error { s.prune(ctx); return nil })
	g.Go("bus housekeeping", func(ctx context.Context) error { return bus.Housekeep(ctx, s.pool, 0, s.log) })
	s.log.InfoContext(ctx, "listening", "addr", s.Addr())
	err := g.Wait()
	s.log.Info("stopped")
	return err
}

func (s *Server) prune(ctx context.Context) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := s.store.Prune(ctx, time.Now())
			if err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "prune", "err", err.Error())
			} else if n > 0 {
				s.log.InfoContext(ctx, "pruned spent sign-in rows", "rows", n)
			}
		}
	}
}
