package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Relay publishes committed outbox rows of one service's schema.
//
// Each round claims the oldest unsent rows with FOR UPDATE SKIP LOCKED, publishes them all
// (each run of consecutive rows with one routing key as one bundle, bundle.go), waits once
// for the broker's confirms and marks the confirmed rows sent in the same transaction. A row
// whose publish is nacked or whose confirm never comes (a lost connection) stays unsent and is
// published again next round: delivery is at least once, and consumers deduplicate by message
// id. SKIP LOCKED lets several relays (copies of a service) share an outbox without
// publishing a row twice in the normal case.
type Relay struct {
	conn *Conn
	pool *pgxpool.Pool
	log  *slog.Logger

	workers        int
	batchSize      int
	poll           time.Duration
	confirmTimeout time.Duration
}

// NewRelay makes a relay for the outbox in pool's schema.
func NewRelay(conn *Conn, pool *pgxpool.Pool, log *slog.Logger) *Relay {
	if log == nil {
		log = conn.base
	}
	return &Relay{
		conn:           conn,
		pool:           pool,
		log:            log.With("component", "bus.relay"),
		workers:        2,
		batchSize:      500,
		poll:           time.Second,
		confirmTimeout: 30 * time.Second,
	}
}

// Run publishes until ctx ends. It wakes on each commit that wrote an outbox row and polls as
// a fallback. Several relays on one schema (several copies of a service) share the work.
func (r *Relay) Run(ctx context.Context) error {
	channel, err := r.notifyChannel(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		r.listen(ctx, channel, wake)
	}()
	defer func() { cancel(); <-listening }()

	defer outboxes.watch(r.pool)() // its depth and age on /metrics (metrics.go)
	r.log.InfoContext(ctx, "bus relay started", "channel", channel, "workers", r.workers)
	// Each worker waits for its own batch's confirms while another claims and publishes the
	// next batch; SKIP LOCKED keeps them (and other relays) off each other's rows.
	errs := make(chan error, r.workers)
	for range r.workers {
		go func() { errs <- r.work(ctx, wake) }()
	}
	var first error
	for range r.workers {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// work relays batches until ctx ends or the Conn closes.
func (r *Relay) work(ctx context.Context, wake chan struct{}) error {
	pub := &confirmChannel{conn: r.conn}
	defer pub.close()
	poll := time.NewTicker(r.poll)
	defer poll.Stop()
	b := backoff{base: 100 * time.Millisecond, max: 5 * time.Second}
	for {
		n, err := r.round(ctx, pub)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrClosed):
			return ErrClosed
		case err != nil:
			r.log.WarnContext(ctx, "bus relay round failed", "err", err, "sent", n)
			if !b.sleep(ctx) {
				return nil
			}
			continue
		}
		b.reset()
		if n == r.batchSize {
			poke(wake) // more are probably waiting: a sleeping worker can take the next batch
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.conn.closing:
			return ErrClosed
		case <-wake:
		case <-poll.C:
		}
	}
}

type outboxRow struct {
	Seq        int64
	ID         string
	RoutingKey string
	Type       string
	Body       []byte
	Headers    map[string]any
	CreatedAt  time.Time
}

// round relays one batch and returns how many rows it marked sent.
func (r *Relay) round(ctx context.Context, pub *confirmChannel) (int, error) {
	// The channel first: waiting for a connection must not hold a transaction and its locks.
	ch, err := pub.get(ctx)
	if err != nil {
		return 0, err
	}
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("bus: relay begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, _ := tx.Query(ctx, `
		SELECT seq, id::text, routing_key, type, body, headers, created_at
		FROM outbox WHERE sent_at IS NULL
		ORDER BY seq LIMIT $1
		FOR UPDATE SKIP LOCKED`, r.batchSize)
	batch, err := pgx.CollectRows(rows, pgx.RowToStructByPos[outboxRow])
	if err != nil {
		return 0, fmt.Errorf("bus: relay claim: %w", err)
	}
	if len(batch) == 0 {
		return 0, tx.Commit(ctx)
	}

	// One message per run of consecutive rows with the same key: a bundle (bundle.go), or the
	// event alone.
	exchange := r.conn.names.events()
	groups := runs(batch)
	pending := make([]*amqp.DeferredConfirmation, 0, len(groups))
	var publishErr error
	for _, run := range groups {
		msg, err := publishing(run, r.conn.user)
		if err != nil {
			publishErr = err
			break
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, run[0].RoutingKey, false, false, msg)
		if err != nil {
			publishErr = fmt.Errorf("bus: relay publish: %w", err)
			pub.drop(ch)
			break
		}
		pending = append(pending, dc)
	}

	waitCtx, cancel := context.WithTimeout(ctx, r.confirmTimeout)
	defer cancel()
	sent := make([]int64, 0, len(batch))
	nacked := 0
	for i, dc := range pending {
		ok, err := dc.WaitContext(waitCtx)
		if err != nil {
			publishErr = errors.Join(publishErr, fmt.Errorf("bus: relay confirm: %w", err))
			pub.drop(ch)
			break
		}
		if !ok {
			nacked++
			continue
		}
		for _, row := range groups[i] {
			sent = append(sent, row.Seq)
		}
		publishedEvents.WithLabelValues(groups[i][0].RoutingKey).Add(float64(len(groups[i])))
	}
	if nacked > 0 {
		// Also what a lost connection looks like: amqp091 nacks every outstanding confirm.
		publishErr = errors.Join(publishErr, fmt.Errorf("bus: relay: %d of %d messages not confirmed", nacked, len(pending)))
	}
	if len(sent) > 0 {
		// The commit need not wait for its WAL to reach the disk, which under a burst is a
		// wait for everyone else's: a mark lost in a crash only means the rows are published
		// again, and consumers deduplicate. One round trip for both statements.
		b := &pgx.Batch{}
		b.Queue(`SET LOCAL synchronous_commit = off`)
		b.Queue(`UPDATE outbox SET sent_at = now() WHERE seq = ANY($1)`, sent)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return 0, fmt.Errorf("bus: relay mark sent: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("bus: relay commit: %w", err)
	}
	return len(sent), publishErr
}

// notifyChannel is the channel outbox_notify() signals for the outbox the pool sees.
func (r *Relay) notifyChannel(ctx context.Context) (string, error) {
	var ch string
	err := r.pool.QueryRow(ctx, `
		SELECT left('outbox_' || n.nspname, 63)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = 'outbox'::regclass`).Scan(&ch)
	if err != nil {
		return "", fmt.Errorf("bus: relay: find outbox (did bus.Migrations run?): %w", err)
	}
	return ch, nil
}

// listen turns notifications on a connection of its own into wake-ups, reconnecting after
// a loss; the poll in Run covers the gaps.
func (r *Relay) listen(ctx context.Context, channel string, wake chan<- struct{}) {
	b := backoff{base: 100 * time.Millisecond, max: 5 * time.Second}
	for {
		err := r.listenOnce(ctx, channel, wake, &b)
		if ctx.Err() != nil {
			return
		}
		r.log.WarnContext(ctx, "bus relay listen lost", "err", err)
		if !b.sleep(ctx) {
			return
		}
	}
}

func (r *Relay) listenOnce(ctx context.Context, channel string, wake chan<- struct{}, b *backoff) error {
	pc, err := r.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// Hijacked, because a LISTENing connection must not go back to the pool for others.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	b.reset()
	poke(wake) // rows may have committed while nobody listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		poke(wake)
	}
}

func poke(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
