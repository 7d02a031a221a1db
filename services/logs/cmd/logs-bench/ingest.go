package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/busapi"
)

// benchIngest sends o.ingestEntries entries through the bus and times them from the commit
// of the zones' outbox to the commit of the last batch in the logs schema.
func benchIngest(ctx context.Context, db *scratch, o options) (err error) {
	busCfg := busConfig(o)
	// The logs binary alone, on the bus settings the publisher uses.
	svc, err := startStack(ctx, db, o, []string{"logs"}, busEnv(busCfg))
	if err != nil {
		return err
	}
	defer func() { svc.stop(err != nil) }()
	// The zone's side, as the zone's own broker user: the logs service takes log batches
	// only from a zone.
	zoneURL, err := principalURL(ctx, o.amqpURL, bus.ZonePrincipal("local"))
	if err != nil {
		return err
	}
	pub, err := startPublisher(ctx, db, busCfg.WithURL(zoneURL))
	if err != nil {
		return err
	}
	defer pub.close()
	queue := busCfg.Namespace + busapi.QueueIngest
	base, err := awaitConsumer(ctx, db, pub, queue)
	if err != nil {
		return err
	}

	batches := (o.ingestEntries + o.batchSize - 1) / o.batchSize
	total := batches * o.batchSize
	gen := newGenerator(50, time.Now(), 1, 1)
	committed := time.Now()
	err = pgstore.InTx(ctx, pub.pool, func(tx pgx.Tx) error {
		for range batches {
			batch := &logsv1.LogBatch{Entries: make([]*logsv1.LogEntry, o.batchSize)}
			for i := range batch.Entries {
				e := gen.entry(gen.rng.IntN(len(gen.apps)), time.Now())
				batch.Entries[i] = &logsv1.LogEntry{
					AppId: e.AppID, DeployId: e.DeployID, Stream: string(e.Stream),
					Timestamp: timestamppb.New(e.Timestamp), Message: e.Message,
				}
			}
			if err := bus.Publish(ctx, tx, zonebus.KeyLogBatch, batch); err != nil {
				return err
			}
		}
		committed = time.Now()
		return nil
	})
	if err != nil {
		return err
	}
	// The batch's processed-message record commits with its COPY, so counting records is
	// counting stored batches, and far cheaper than counting rows.
	var relayDone time.Duration
	for {
		var done, unsent int
		if err := db.queryRow(ctx, `SELECT
				(SELECT count(*) FROM logs.processed_messages WHERE queue = $1),
				(SELECT count(*) FROM bench_zone.outbox WHERE sent_at IS NULL)`, queue).Scan(&done, &unsent); err != nil {
			return err
		}
		if unsent == 0 && relayDone == 0 {
			relayDone = time.Since(committed)
		}
		if done >= base+batches {
			break
		}
		if time.Since(committed) > 10*time.Minute {
			return fmt.Errorf("only %d of %d batches stored after 10 minutes", done, batches)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(committed)
	var stored int
	if err := db.queryRow(ctx, `SELECT count(*) FROM logs.log_entries WHERE app_id = ANY($1::uuid[])`, gen.apps).Scan(&stored); err != nil {
		return err
	}
	if stored != total {
		return fmt.Errorf("%d entries stored, want %d", stored, total)
	}
	fmt.Printf("ingest: %d entries in %d bus messages of %d (%s queue), outbox commit to last COPY commit %s: %.0f entries/s (relay had published all after %s)\n",
		total, batches, o.batchSize, o.queueType, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), relayDone.Round(time.Millisecond))
	return nil
}

// awaitConsumer publishes probe batches until one is stored (the consumer declares its
// queue when it starts, and the broker drops what is published before), then waits for every
// probe to be stored and returns how many batches that makes.
func awaitConsumer(ctx context.Context, db *scratch, pub *publisher, queue string) (int, error) {
	probe := uuid.NewString()
	processed := func() (n int) {
		_ = db.queryRow(ctx, `SELECT count(*) FROM logs.processed_messages WHERE queue = $1`, queue).Scan(&n)
		return n
	}
	sent := 0
	for processed() == 0 {
		if sent == 300 {
			return 0, fmt.Errorf("the logs service never stored a probe batch")
		}
		err := pgstore.InTx(ctx, pub.pool, func(tx pgx.Tx) error {
			return bus.Publish(ctx, tx, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{
				{AppId: probe, Stream: "system", Timestamp: timestamppb.Now(), Message: "probe"},
			}})
		})
		if err != nil {
			return 0, err
		}
		sent++
		time.Sleep(200 * time.Millisecond)
	}
	for n := processed(); ; n = processed() {
		// Probes published before the queue existed are lost; once one arrived, all later ones
		// do. Settled when the count stops moving.
		time.Sleep(500 * time.Millisecond)
		if processed() == n {
			return n, nil
		}
	}
}
