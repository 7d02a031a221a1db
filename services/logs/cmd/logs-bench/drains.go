package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// drainReceiver is the bench's HTTPS drain receiver: it counts lines and how long after its
// timestamp each batch's oldest line arrived (the drain's lag: ingest, backlog, batch wait and
// delivery).
type drainReceiver struct {
	srv   *httptest.Server
	lines atomic.Int64
	mu    sync.Mutex
	lags  []time.Duration
}

func newDrainReceiver() *drainReceiver {
	r := &drainReceiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The receiver shares the machine with what it measures, so it does little: lines are
		// counted by their newlines, and the lag is the batch's first (oldest) line's.
		now := time.Now()
		body, _ := io.ReadAll(req.Body)
		var first struct{ Timestamp time.Time }
		if i := bytes.IndexByte(body, '\n'); i > 0 && json.Unmarshal(body[:i], &first) == nil {
			r.mu.Lock()
			r.lags = append(r.lags, now.Sub(first.Timestamp))
			r.mu.Unlock()
		}
		r.lines.Add(int64(bytes.Count(body, []byte{'\n'})))
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

func (r *drainReceiver) reset() {
	r.mu.Lock()
	r.lags = nil
	r.mu.Unlock()
	r.lines.Store(0)
}

// benchDrains: the logs service binary ingests one app's lines from the bus at o.drainRate
// entries/s while the route's page is read over and over, in rounds that alternate without
// and with an HTTPS drain on the app; it prints the drain's delivered rate and lag and the
// route's p99 either way, and their medians over the rounds.
func benchDrains(ctx context.Context, db *scratch, o options) (err error) {
	rcv := newDrainReceiver()
	defer rcv.srv.Close()
	caFile := filepath.Join(os.TempDir(), "logs-bench-drain-ca-"+uuid.NewString()[:8]+".pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.srv.Certificate().Raw}), 0o600); err != nil {
		return err
	}
	defer os.Remove(caFile)
	busCfg := busConfig(o)
	env := busEnv(busCfg)
	env["LOGS_DRAIN_TEST_HOST"] = rcv.srv.Listener.Addr().String()
	env["LOGS_DRAIN_TEST_CA"] = caFile
	s, err := startStack(ctx, db, o, []string{"logs"}, env)
	if err != nil {
		return err
	}
	defer func() { s.stop(err != nil) }()
	zoneURL, err := principalURL(ctx, o.amqpURL, bus.ZonePrincipal("local"))
	if err != nil {
		return err
	}
	pub, err := startPublisher(ctx, db, busCfg.WithURL(zoneURL))
	if err != nil {
		return err
	}
	defer pub.close()
	if _, err := awaitConsumer(ctx, db, pub, busCfg.Namespace+busapi.QueueIngest); err != nil {
		return err
	}
	pool, st, err := openStore(ctx, db)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer st.Close()

	// The customer's app, its plan, and an hour of its lines the route reads (an hour ago, so
	// the page stays the same while the run's lines land after it).
	app := logs.App{ID: uuid.NewString(), AccountID: uuid.NewString(), Slug: "drained"}
	err = st.InTx(ctx, func(tx usecase.Tx) error {
		if err := tx.SaveApp(ctx, app, time.Now()); err != nil {
			return err
		}
		return tx.SavePlan(ctx, logs.Plan{AccountID: app.AccountID, Name: "flock", RetentionDays: flockRetentionDays, Version: 1, Drains: 10})
	})
	if err != nil {
		return err
	}
	from := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	gen := newGenerator(1, from, 1, 3)
	gen.apps[0] = app.ID
	if err := seed(ctx, db, st, gen, o.drainSeed); err != nil {
		return err
	}
	path := "/api/apps/" + app.Slug + "/logs?" + url.Values{
		"start": {from.Format(time.RFC3339)}, "end": {from.Add(time.Hour).Format(time.RFC3339)}, "limit": {fmt.Sprint(o.limit)},
	}.Encode()
	reader := newPageReader(s.logs, path, signed(s.key, app.AccountID))
	if err := reader.check(ctx); err != nil {
		return err
	}

	type round struct {
		without, with            time.Duration // the route's p99
		delivered, rate          float64       // lines delivered, per second over the phase
		lagP50, lagP99, catchUp  time.Duration
		published, deliveredLast int64
	}
	var rounds []round
	fmt.Printf("drains: %d entries/s for %s per phase, one app, HTTPS drain to a local receiver; GET /logs (%d-entry page, the service's route) read sequentially meanwhile; %d rounds alternating without/with\n",
		o.drainRate, o.drainPhase, o.limit, o.drainRounds)
	for i := range o.drainRounds {
		var r round
		// Without a drain.
		_, without, err := drainPhase(ctx, pub, reader, app.ID, o)
		if err != nil {
			return err
		}
		r.without = percentile(without, 99)
		// With one: created before the phase's lines, removed after.
		rcv.reset()
		d := drains.Drain{ID: uuid.NewString(), AppID: app.ID, AccountID: app.AccountID, Kind: drains.KindHTTPS,
			URL: "https://" + rcv.srv.Listener.Addr().String() + "/", Secret: "bench", CreatedAt: time.Now()}
		if err := st.CreateDrain(ctx, d, 10, "flock"); err != nil {
			return err
		}
		start := time.Now()
		published, with, err := drainPhase(ctx, pub, reader, app.ID, o)
		if err != nil {
			return err
		}
		phase := time.Since(start)
		deliveredInPhase := rcv.lines.Load()
		stopAt := time.Now()
		for rcv.lines.Load() < published && time.Since(stopAt) < time.Minute {
			time.Sleep(10 * time.Millisecond)
		}
		r.catchUp = time.Since(stopAt)
		r.with = percentile(with, 99)
		r.published, r.deliveredLast = published, rcv.lines.Load()
		r.rate = float64(deliveredInPhase) / phase.Seconds()
		rcv.mu.Lock()
		r.lagP50, r.lagP99 = percentile(rcv.lags, 50), percentile(rcv.lags, 99)
		rcv.mu.Unlock()
		if err := st.DeleteDrain(ctx, app.ID, d.ID); err != nil {
			return err
		}
		fmt.Printf("  round %d: without p99 %s, with p99 %s (%s); drain delivered %d of %d lines, %.0f lines/s during the phase, lag p50 %s p99 %s, caught up %s after the last publish\n",
			i+1, ms(r.without), ms(r.with), ratio(r.with, r.without), r.deliveredLast, r.published, r.rate, ms(r.lagP50), ms(r.lagP99), ms(r.catchUp))
		if r.deliveredLast < r.published {
			return fmt.Errorf("round %d: the drain delivered %d of %d lines within a minute", i+1, r.deliveredLast, r.published)
		}
		rounds = append(rounds, r)
	}
	med := func(f func(round) float64) float64 {
		v := make([]float64, len(rounds))
		for i, r := range rounds {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	dur := func(f func(round) time.Duration) time.Duration {
		return time.Duration(med(func(r round) float64 { return float64(f(r)) }))
	}
	wo, wi := dur(func(r round) time.Duration { return r.without }), dur(func(r round) time.Duration { return r.with })
	perRound := med(func(r round) float64 { return float64(r.with) / float64(r.without) })
	fmt.Printf("drains: median of %d rounds: delivered %.0f lines/s (offered %d/s), lag p50 %s p99 %s; GET /logs p99 without %s, with %s: %s (%+.1f%%); median of the rounds' ratios %.2fx\n",
		len(rounds), med(func(r round) float64 { return r.rate }), o.drainRate,
		ms(dur(func(r round) time.Duration { return r.lagP50 })), ms(dur(func(r round) time.Duration { return r.lagP99 })),
		ms(wo), ms(wi), ratio(wi, wo), (float64(wi)/float64(wo)-1)*100, perRound)
	return nil
}

// drainPhase publishes o.drainRate entries/s of the app for o.drainPhase (a zone's batch
// every 100 ms) while reading the route in a loop; it returns how many entries it published
// and the reads' latencies.
func drainPhase(ctx context.Context, pub *publisher, reader *pageReader, appID string, o options) (int64, []time.Duration, error) {
	perBatch := o.drainRate / 10
	stop := make(chan struct{})
	var published int64
	var pubErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		end := time.Now().Add(o.drainPhase)
		for n := 0; time.Now().Before(end); n++ {
			batch := &logsv1.LogBatch{Entries: make([]*logsv1.LogEntry, perBatch)}
			now := time.Now()
			for i := range batch.Entries {
				batch.Entries[i] = &logsv1.LogEntry{AppId: appID, Stream: "stdout", Process: "web.1",
					Timestamp: timestamppb.New(now), Message: fmt.Sprintf("GET /items/%d 200 in %dms", n*perBatch+i, i%97)}
			}
			err := pgstore.InTx(ctx, pub.pool, func(tx pgx.Tx) error { return bus.Publish(ctx, tx, zonebus.KeyLogBatch, batch) })
			if err != nil {
				pubErr = err
				return
			}
			published += int64(perBatch)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		close(stop)
	}()
	var taken []time.Duration
	for reading := true; reading; {
		select {
		case <-stop:
			reading = false
			continue
		case <-done:
			reading = false
			continue
		default:
		}
		d, _, err := reader.once(ctx)
		if err != nil {
			return 0, nil, err
		}
		taken = append(taken, d)
	}
	<-done
	return published, taken, pubErr
}
