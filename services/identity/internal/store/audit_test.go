package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/pgstore"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
)

func entryAt(teamID, userID string, at time.Time) *auditv1.EntryRecorded {
	return &auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: teamID, At: timestamppb.New(at), ActorType: "user",
		UserId: userID, Action: "env.set", Target: "apps/web/env", Outcome: "success"}
}

func countEntries(t *testing.T, db pgstore.Beginner, teamID string) int {
	t.Helper()
	var n int
	err := pgstore.InTx(context.Background(), db, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM audit_entries WHERE team_id = $1`, teamID).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The gate's Writer records an entry once by id, with its user's address.
func TestWriteAuditEntryOnceWithEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	_, u := newAccount(t, s, "ada@example.com")
	team := uuid.NewString()
	e := entryAt(team, u.ID, t0)
	for range 2 {
		if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return store.WriteAuditEntry(ctx, tx, e) }); err != nil {
			t.Fatal(err)
		}
	}
	var email, meta string
	if err := pool.QueryRow(ctx, `SELECT email, metadata::text FROM audit_entries WHERE id = $1`, e.EntryId).Scan(&email, &meta); err != nil ||
		email != "ada@example.com" || meta != "{}" || countEntries(t, pool, team) != 1 {
		t.Fatalf("entry: %q %q %v, %d rows", email, meta, err, countEntries(t, pool, team))
	}
	// An actor identity no longer knows (or a system actor) is recorded without an address.
	sys := &auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: team, At: timestamppb.New(t0), ActorType: "system",
		Action: "app.delete", Target: "apps/web", Outcome: "success", Metadata: map[string]string{"reason": "hold"}}
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return store.WriteAuditEntry(ctx, tx, sys) }); err != nil {
		t.Fatal(err)
	}
}

// Nothing changes or removes an entry, except the prune in a transaction that says so.
func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	_, u := newAccount(t, s, "ada@example.com")
	team := uuid.NewString()
	e := entryAt(team, u.ID, t0)
	if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return store.WriteAuditEntry(ctx, tx, e) }); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE audit_entries SET outcome = 'denied' WHERE id = $1`,
		`UPDATE audit_entries SET metadata = '{"x":"y"}' WHERE id = $1`,
		`DELETE FROM audit_entries WHERE id = $1`,
	} {
		_, err := pool.Exec(ctx, q, e.EntryId)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
	// The prune's setting lets a DELETE through, never an UPDATE.
	err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL tori.audit_prune = 'on'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE audit_entries SET outcome = 'denied' WHERE id = $1`, e.EntryId)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("update under the prune's setting: %v", err)
	}
	// SET LOCAL ends with its transaction: the next one is refused again.
	if _, err := pool.Exec(ctx, `DELETE FROM audit_entries WHERE id = $1`, e.EntryId); err == nil {
		t.Error("delete after the prune's transaction went through")
	}
	if countEntries(t, pool, team) != 1 {
		t.Fatal("the entry changed")
	}
}

// The prune keeps each team's plan's days (nestling's seven without a plan copy).
func TestPruneAuditEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	_, u := newAccount(t, s, "ada@example.com")
	nestling, flock := uuid.NewString(), uuid.NewString()
	if _, err := pool.Exec(ctx, `INSERT INTO account_plans (account_id, plan, max_custom_domains, database_connections,
		database_bytes, version, updated_at, audit_retention_days) VALUES ($1, 'flock', 50, 100, 1, 1, now(), 365)`, flock); err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	for _, team := range []string{nestling, flock} {
		for _, age := range []time.Duration{time.Hour, 6 * day, 8 * day, 364 * day, 366 * day} {
			if err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return store.WriteAuditEntry(ctx, tx, entryAt(team, u.ID, t0.Add(-age))) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := s.PruneAuditEntries(ctx, t0, 7)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if a, b := countEntries(t, pool, nestling), countEntries(t, pool, flock); a != 2 || b != 4 {
		t.Fatalf("kept nestling %d, flock %d", a, b)
	}
}
