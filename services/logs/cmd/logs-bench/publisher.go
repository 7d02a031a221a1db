package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
)

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

// busEnv is busCfg as the environment of a service process.
func busEnv(busCfg bus.Config) map[string]string {
	return map[string]string{
		"BUS_NAMESPACE":       busCfg.Namespace,
		"BUS_QUEUE_TYPE":      busCfg.QueueType,
		"BUS_QUEUE_EXPIRES":   busCfg.QueueExpires.String(),
		"BUS_MAX_ATTEMPTS":    strconv.Itoa(busCfg.MaxAttempts),
		"BUS_BASE_BACKOFF":    busCfg.BaseBackoff.String(),
		"BUS_REQUEST_TIMEOUT": busCfg.RequestTimeout.String(),
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
