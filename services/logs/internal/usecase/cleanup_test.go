package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	logsbus "tori.dev/proto/tori/logs/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

func TestCleanupRemovesEntriesInBatchesAndConfirms(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	gone := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "gone"}
	kept := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "kept"}
	db.SaveApp(t, gone)
	db.SaveApp(t, kept)
	var seed []logs.Entry
	for i := range 2345 {
		// Three days, so the cleanup crosses partitions.
		ts := now.Add(-time.Duration(i%3) * 24 * time.Hour)
		seed = append(seed, logs.Entry{AppID: gone.ID, Stream: logs.StreamStdout, Timestamp: ts, Message: "bye"})
	}
	seed = append(seed, logs.Entry{AppID: kept.ID, Stream: logs.StreamStdout, Timestamp: now, Message: "stay"})
	db.Seed(t, seed)

	c := usecase.NewCleanup(db.Store, quiet, time.Now, 100)
	if n, err := c.Run(ctx); err != nil || n != 0 {
		t.Fatalf("idle round: %d confirmed, %v", n, err)
	}
	if n := db.Count(t, gone.ID); n != 2345 {
		t.Fatalf("a live app lost entries: %d", n)
	}

	db.MarkAppDeleted(t, gone, now)
	if n, err := c.Run(ctx); err != nil || n != 1 {
		t.Fatalf("%d confirmed, %v; want 1", n, err)
	}
	if n := db.Count(t, gone.ID); n != 0 {
		t.Fatalf("%d entries of the deleted app left", n)
	}
	if n := db.Count(t, kept.ID); n != 1 {
		t.Fatalf("the other app has %d entries, want 1", n)
	}
	confirmations := outbox(t, db)
	if len(confirmations) != 1 || confirmations[0].GetAppId() != gone.ID || confirmations[0].GetService() != "logs" || confirmations[0].GetConfirmedAt() == nil {
		t.Fatalf("confirmations %v", confirmations)
	}

	// Nothing pending: no second confirmation.
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(outbox(t, db)); n != 1 {
		t.Fatalf("%d confirmations after an idle round", n)
	}
	// The apps service asking again (a new delete event) is answered again.
	db.MarkAppDeleted(t, gone, now)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(outbox(t, db)); n != 2 {
		t.Fatalf("%d confirmations after a repeated delete, want 2", n)
	}
}

// outbox decodes the confirmations waiting in the outbox.
func outbox(t *testing.T, db *logstest.DB) []*appsv1.AppCleanupConfirmed {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT routing_key, type, body FROM outbox ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*appsv1.AppCleanupConfirmed
	for rows.Next() {
		var key, typ string
		var body []byte
		if err := rows.Scan(&key, &typ, &body); err != nil {
			t.Fatal(err)
		}
		if key != logsbus.KeyAppCleaned || typ != "tori.apps.v1.AppCleanupConfirmed" {
			t.Fatalf("outbox row %s %s", key, typ)
		}
		var m appsv1.AppCleanupConfirmed
		if err := proto.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &m)
	}
	return out
}
