package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/service"
)

const signingKey = "logs-bench-signing-key"

// runningService is a logs service run in this process, exactly as cmd/logs runs it.
type runningService struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func busConfig(o options) bus.Config {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return bus.Config{
		URL:            o.amqpURL,
		Namespace:      "bench_" + hex.EncodeToString(b) + ".",
		QueueType:      o.queueType,
		QueueExpires:   10 * time.Minute, // the broker forgets the benchmark's queues
		MaxAttempts:    5,
		BaseBackoff:    200 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
	}
}

func startService(ctx context.Context, db *scratch, busCfg bus.Config) (*runningService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := config.Config{
		Addr:                 addr,
		DatabaseURL:          db.url,
		SigningKey:           signingKey,
		Bus:                  busCfg,
		MaxRetentionDays:     30,
		DefaultRetentionDays: 1,
		PartitionsAhead:      2,
		MaintenanceInterval:  15 * time.Minute,
		CleanupInterval:      2 * time.Second,
		CleanupBatch:         5000,
		IngestPrefetch:       8,
		PlanLookupTimeout:    2 * time.Second,
		ProcessedRetention:   72 * time.Hour,
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &runningService{addr: addr, cancel: cancel, done: make(chan error, 1)}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { s.done <- service.Run(sctx, cfg, quiet, "bench") }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("logs service stopped at start: %w", err)
		default:
		}
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("logs service did not answer /healthz")
}

func (s *runningService) stop() {
	s.cancel()
	if err := <-s.done; err != nil {
		fmt.Println("logs service stopped with:", err)
	}
}

// publisher is the zones' side: an outbox of its own and a relay publishing it.
type publisher struct {
	pool   *pgxpool.Pool
	conn   *bus.Conn
	cancel context.CancelFunc
	done   chan struct{}
}

func startPublisher(ctx context.Context, db *scratch, busCfg bus.Config) (*publisher, error) {
	pool, err := pgstore.Setup(ctx, db.url, pgstore.Service{Schema: "bench_zone", Role: "tori_bench_zone"}, pgstore.WithMigrations(bus.Migrations))
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn, err := bus.Dial(ctx, busCfg, quiet)
	if err != nil {
		pool.Close()
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	p := &publisher{pool: pool, conn: conn, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = bus.NewRelay(conn, pool, quiet).Run(rctx)
	}()
	return p, nil
}

func (p *publisher) close() {
	p.cancel()
	<-p.done
	p.conn.Close()
	p.pool.Close()
}
