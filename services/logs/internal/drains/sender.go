package drains

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
)

// SenderOptions are the sender's timings and bounds.
type SenderOptions struct {
	// Lease is how long a claimed drain stays this replica's without a renewal; a killed
	// replica's drains are taken over this long after its last renewal.
	Lease time.Duration
	// Poll is how often an idle drain's backlog is looked at (a batch waits at most this).
	Poll time.Duration
	// Claim is how often drains nobody holds are looked for.
	Claim time.Duration
	// Backlog is the most lines a drain keeps waiting; older ones are dropped and counted.
	Backlog int
	// Batch is the most lines in one delivery.
	Batch int
	// MinBackoff and MaxBackoff bound the wait after a failed batch (doubling).
	MinBackoff, MaxBackoff time.Duration
}

// DefaultSenderOptions are the sender's defaults (config overrides Lease and Backlog).
var DefaultSenderOptions = SenderOptions{
	Lease: 15 * time.Second, Poll: 200 * time.Millisecond, Claim: time.Second,
	Backlog: 10000, Batch: 1000, MinBackoff: time.Second, MaxBackoff: 30 * time.Second,
}

// Sender runs one worker per drain this replica holds. Replicas share drains through the
// lease (Store.ClaimDrains): a drain has one sender at a time, so its batches go out in
// order, and a replica that dies leaves its drains to another after the lease.
type Sender struct {
	store   Store
	deliver Deliverer
	opts    SenderOptions
	owner   string
	log     *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// NewSender builds a sender; owner names this replica in leases ("" for host/pid/a fresh
// id, so an operator can tell which process holds a drain).
func NewSender(st Store, dv Deliverer, opts SenderOptions, owner string, log *slog.Logger, now func() time.Time) *Sender {
	if dv.Clients == nil {
		dv.Clients = NewClients()
	}
	if owner == "" {
		host, _ := os.Hostname()
		owner = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	return &Sender{store: st, deliver: dv, opts: opts, owner: owner, log: log, now: now, running: map[string]bool{}}
}

// Run claims drains and sends until ctx ends, then releases them so another replica takes
// over at once.
func (s *Sender) Run(ctx context.Context) error {
	t := time.NewTicker(s.opts.Claim)
	defer t.Stop()
	for {
		s.claim(ctx)
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return nil
		case <-t.C:
		}
	}
}

func (s *Sender) claim(ctx context.Context) {
	ids, err := s.store.ClaimDrains(ctx, s.owner, s.opts.Lease, 100)
	if err != nil {
		if ctx.Err() == nil {
			s.log.WarnContext(ctx, "claiming drains failed", "err", err.Error())
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.running[id] {
			continue
		}
		s.running[id] = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.work(ctx, id)
			s.mu.Lock()
			delete(s.running, id)
			s.mu.Unlock()
		}()
	}
}

// work sends one drain's backlog while this replica holds its lease.
func (s *Sender) work(ctx context.Context, id string) {
	defer func() {
		s.deliver.Clients.Drop(id)
		if err := s.store.ReleaseLease(context.WithoutCancel(ctx), id, s.owner); err != nil {
			s.log.Warn("releasing a drain failed", "drain_id", id, "err", err.Error())
		}
	}()
	d, slug, err := s.store.SendTarget(ctx, id)
	if err != nil {
		if !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
			s.log.WarnContext(ctx, "reading a drain failed", "drain_id", id, "err", err.Error())
		}
		return
	}
	backoff := time.Duration(0)
	var renewed time.Time
	full := true // trim at the start: the backlog may have grown while nobody sent
	for ctx.Err() == nil {
		// Renewed a few times a lease rather than every batch (a statement less per batch);
		// a lease is then held for at most a quarter of it plus one delivery unrenewed.
		if time.Since(renewed) > s.opts.Lease/4 {
			held, err := s.store.RenewLease(ctx, id, s.owner, s.opts.Lease)
			if err != nil || !held {
				return // gone, taken over, or the database is away: the claim loop tries again
			}
			renewed = time.Now()
		}
		// Only a backlog that filled a batch can be past its bound; failing, failed() trims.
		if full {
			s.trim(ctx, d)
		}
		entries, keys, err := s.store.Pending(ctx, id, s.opts.Batch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "reading a drain's backlog failed", "drain_id", id, "err", err.Error())
			}
			sleep(ctx, s.opts.Poll)
			continue
		}
		full = len(keys) == s.opts.Batch
		if len(keys) == 0 {
			sleep(ctx, s.opts.Poll)
			continue
		}
		if len(entries) > 0 {
			if _, err := s.deliver.Deliver(ctx, d, slug, entries); err != nil {
				if ctx.Err() != nil {
					return // the batch stays in the backlog for whoever sends next
				}
				backoff = s.failed(ctx, d, err, backoff)
				renewed, full = time.Time{}, true
				continue
			}
		}
		var last int64
		if len(entries) > 0 {
			last = entries[len(entries)-1].ID
		}
		// Acknowledged even when ctx ended meanwhile: the receiver has the lines.
		if err := s.store.Acknowledge(context.WithoutCancel(ctx), id, keys, len(entries), last, s.now()); err != nil {
			s.log.WarnContext(ctx, "recording a delivery failed (its lines will be sent again)", "drain_id", id, "err", err.Error())
		}
		backoff = 0
		if !full {
			// A busy app's lines arrive a few at a time: waiting a poll for more sends them in
			// batches of hundreds (a POST, a read and an acknowledgement each) instead of one
			// round per ingest, which took CPU from the log route at 5,000 lines/s (bench-drains:
			// the route's p99 1.29x without this wait, 1.10x with it). A line still leaves
			// within a second: a poll's wait, then its batch's delivery.
			sleep(ctx, s.opts.Poll)
		}
	}
}

// failed records a failed batch and waits out the next backoff, trimming the backlog
// meanwhile so that a slow receiver's overflow is counted as it happens.
func (s *Sender) failed(ctx context.Context, d Drain, err error, backoff time.Duration) time.Duration {
	if err := s.store.RecordFailure(ctx, d.ID, err.Error(), FailingAfter, s.now()); err != nil && ctx.Err() == nil {
		s.log.WarnContext(ctx, "recording a drain failure failed", "drain_id", d.ID, "err", err.Error())
	}
	backoff = nextBackoff(backoff, s.opts.MinBackoff, s.opts.MaxBackoff)
	s.log.InfoContext(ctx, "drain delivery failed", "drain_id", d.ID, "retry_in", backoff.String(), "err", err.Error())
	until := time.Now().Add(backoff)
	for ctx.Err() == nil && time.Now().Before(until) {
		sleep(ctx, min(time.Second, time.Until(until)))
		if held, err := s.store.RenewLease(ctx, d.ID, s.owner, s.opts.Lease); err != nil || !held {
			return backoff
		}
		s.trim(ctx, d)
	}
	return backoff
}

// nextBackoff is the wait after a failed batch: lo after the first, then doubling up to hi.
func nextBackoff(prev, lo, hi time.Duration) time.Duration {
	switch {
	case prev == 0:
		return lo
	case prev*2 > hi:
		return hi
	default:
		return prev * 2
	}
}

// trim drops what the backlog holds past its bound and says so in the app's own log.
func (s *Sender) trim(ctx context.Context, d Drain) {
	// One place is kept for the notice below, so that the notice itself never pushes a line
	// out (which would make a notice of its own, and so on, every round).
	notice := func(n int64) string { return DroppedMessage(d.ID, n) }
	dropped, err := s.store.Trim(ctx, d.ID, s.opts.Backlog, max(s.opts.Backlog-1, 1), s.now(), notice)
	if err != nil {
		if ctx.Err() == nil {
			s.log.WarnContext(ctx, "trimming a drain's backlog failed", "drain_id", d.ID, "err", err.Error())
		}
		return
	}
	if dropped == 0 {
		return
	}
	s.log.WarnContext(ctx, "drain backlog overflowed", "drain_id", d.ID, "dropped", dropped)
}

// DroppedMessage is the system line an overflow writes to the app's log.
func DroppedMessage(drainID string, n int64) string {
	return fmt.Sprintf("drain %s: dropped %d lines (receiver too slow or failing)", drainID, n)
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
