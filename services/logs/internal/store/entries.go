package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

var (
	copyColumns       = []string{"ts", "app_id", "deploy_id", "redactions", "stream", "message", "process"}
	copyColumnsWithID = append([]string{"id"}, copyColumns...)
)

// CopyEntries writes entries with COPY in tx; ids come from the table's sequence, in the
// order given, so lines of one batch that share a timestamp keep their order. The
// partitions of the entries' days must exist (EnsurePartitions).
//
// The entries of apps with drains also enter each drain's backlog, in the same transaction:
// whatever stores a line (the ingest, a drain's overflow notice) goes through here, so no
// committed line is missed and none uncommitted sent. An app without drains costs one
// indexed look at the small drains table per call; a trigger with a transition table did the
// same job at +40 % of every COPY's time, drains or not.
func (d queries) CopyEntries(ctx context.Context, entries []logs.Entry) (int64, error) {
	drained, err := d.drainedApps(ctx, entries)
	if err != nil {
		return 0, err
	}
	if len(drained) == 0 {
		return d.copyEntries(ctx, entries, copyColumns, &entrySource{entries: entries})
	}
	// The ids are taken first, in order, so the backlog can name the rows.
	withIDs := make([]logs.Entry, len(entries))
	copy(withIDs, entries)
	rows, err := d.q.Query(ctx, `SELECT nextval('log_entry_ids') FROM generate_series(1, $1::int) ORDER BY 1`, len(entries))
	if err != nil {
		return 0, fmt.Errorf("store: entry ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(ids) != len(entries) {
		return 0, fmt.Errorf("store: entry ids: %d for %d entries: %v", len(ids), len(entries), err)
	}
	var (
		ts    []time.Time
		bids  []int64
		bapps []string
	)
	for i := range withIDs {
		withIDs[i].ID = ids[i]
		if drained[withIDs[i].AppID] {
			ts, bids, bapps = append(ts, withIDs[i].Timestamp), append(bids, ids[i]), append(bapps, withIDs[i].AppID)
		}
	}
	n, err := d.copyEntries(ctx, withIDs, copyColumnsWithID, &entrySource{entries: withIDs, withID: true})
	if err != nil {
		return 0, err
	}
	_, err = d.q.Exec(ctx, `
		INSERT INTO drain_backlog (drain_id, ts, entry_id, app_id)
		SELECT dr.id, u.ts, u.id, u.app FROM unnest($1::timestamptz[], $2::bigint[], $3::uuid[]) AS u(ts, id, app)
		JOIN drains dr ON dr.app_id = u.app
		ON CONFLICT DO NOTHING`, ts, bids, bapps)
	if err != nil {
		return 0, fmt.Errorf("store: drain backlog: %w", err)
	}
	return n, nil
}

// drainedApps are those of the entries' apps that have drains.
func (d queries) drainedApps(ctx context.Context, entries []logs.Entry) (map[string]bool, error) {
	var apps []string
	seen := map[string]bool{}
	for _, e := range entries {
		if !seen[e.AppID] {
			seen[e.AppID] = true
			apps = append(apps, e.AppID)
		}
	}
	rows, err := d.q.Query(ctx, `SELECT DISTINCT app_id::text FROM drains WHERE app_id = ANY($1::uuid[])`, apps)
	if err != nil {
		return nil, fmt.Errorf("store: drained apps: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: drained apps: %w", err)
	}
	out := make(map[string]bool, len(found))
	for _, a := range found {
		out[a] = true
	}
	return out, nil
}

func (d queries) copyEntries(ctx context.Context, entries []logs.Entry, columns []string, src pgx.CopyFromSource) (int64, error) {
	n, err := d.q.CopyFrom(ctx, pgx.Identifier{"log_entries"}, columns, src)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23514" && pe.ConstraintName == "" {
		// check_violation without a constraint is "no partition of relation found for row".
		d.parts.reset()
		return 0, fmt.Errorf("%w: %s", ErrNoPartition, pe.Message)
	}
	if err != nil {
		return 0, fmt.Errorf("store: copy entries: %w", err)
	}
	return n, nil
}

// entrySource feeds COPY from the slice without building a row of interfaces per entry up
// front.
type entrySource struct {
	entries []logs.Entry
	withID  bool // the id column first (ids taken in advance)
	next    int
	row     [8]any
}

func (s *entrySource) Next() bool {
	s.next++
	return s.next <= len(s.entries)
}

func (s *entrySource) Values() ([]any, error) {
	e := s.entries[s.next-1]
	app, err := uuid.Parse(e.AppID)
	if err != nil {
		return nil, fmt.Errorf("store: entry app id %q: %w", e.AppID, err)
	}
	deploy := pgtype.UUID{}
	if e.DeployID != "" {
		d, err := uuid.Parse(e.DeployID)
		if err != nil {
			return nil, fmt.Errorf("store: entry deploy id %q: %w", e.DeployID, err)
		}
		deploy = pgtype.UUID{Bytes: d, Valid: true}
	}
	s.row = [8]any{e.ID, e.Timestamp, pgtype.UUID{Bytes: app, Valid: true}, deploy, e.Redactions, string(e.Stream), e.Message, e.Process}
	if s.withID {
		return s.row[:], nil
	}
	return s.row[1:], nil
}

func (s *entrySource) Err() error { return nil }

const (
	// PageFirstSQL is the statement of a first page ($1 app, $2 start, $3 end, $4 limit).
	// Exported so that the benchmark times the very statement the route runs.
	PageFirstSQL = `
		SELECT id, ts, stream, deploy_id, message, process FROM log_entries
		WHERE app_id = $1 AND ts >= $2 AND ts < $3
		ORDER BY ts, id LIMIT $4`
	// The row comparison resumes exactly after the cursor's entry, and the (app_id, ts, id)
	// index serves it as a range start.
	pageAfter = `
		SELECT id, ts, stream, deploy_id, message, process FROM log_entries
		WHERE app_id = $1 AND ts >= $2 AND ts < $3 AND (ts, id) > ($5, $6)
		ORDER BY ts, id LIMIT $4`
)

// processCondition is the SQL of a process filter, its parameters numbered from next. It
// repeats the index's expression and predicate word for word (log_entries_app_process), so
// the planner uses that index whatever the parameters' values.
func processCondition(f logs.ProcessFilter, next int) (string, []any) {
	if f.Any() {
		return "", nil
	}
	cond := fmt.Sprintf(" AND process <> '' AND split_part(process, '.', 1) = $%d", next)
	if f.Exact == "" {
		return cond, []any{f.Type}
	}
	return cond + fmt.Sprintf(" AND process = $%d", next+1), []any{f.Type, f.Exact}
}

// withProcess adds the filter's condition to a statement before its ORDER BY.
func withProcess(sql string, args []any, f logs.ProcessFilter) (string, []any) {
	cond, extra := processCondition(f, len(args)+1)
	if cond == "" {
		return sql, args
	}
	i := strings.LastIndex(sql, "ORDER BY")
	return sql[:i] + cond[1:] + " " + sql[i:], append(args, extra...)
}

// Entries implements usecase.EntryReader.
func (s *Store) Entries(ctx context.Context, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) ([]logs.Entry, error) {
	sql, args := PageQuery(appID, from, to, after, proc, limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read entries: %w", err)
	}
	return scanEntries(rows, appID, limit)
}

// TargetAndEntries implements usecase.CheckedEntryReader: the target lookup and the page query
// go out as one pipelined batch, one round trip, the lookup first.
func (s *Store) TargetAndEntries(ctx context.Context, accountID, slug, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) (usecase.Target, []logs.Entry, error) {
	b := &pgx.Batch{}
	b.Queue(targetSQL, accountID, slug)
	sql, args := PageQuery(appID, from, to, after, proc, limit)
	b.Queue(sql, args...)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	target, err := scanTarget(br.QueryRow())
	if err != nil {
		return usecase.Target{}, nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return usecase.Target{}, nil, fmt.Errorf("store: read entries: %w", err)
	}
	entries, err := scanEntries(rows, appID, limit)
	if err != nil {
		return usecase.Target{}, nil, err
	}
	return target, entries, nil
}

// PageQuery is the statement and arguments of one page read. Exported so that the benchmark
// and the test of the query plan run the very statement the route runs.
func PageQuery(appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) (string, []any) {
	if after == nil {
		return withProcess(PageFirstSQL, []any{appID, from, to, limit}, proc)
	}
	return withProcess(pageAfter, []any{appID, from, to, limit, after.Timestamp, after.ID}, proc)
}

// scanEntries reads a page's rows and closes them. A page is up to 500 rows: each is
// scanned straight into its place in the result, the stream is one of the contract's
// constants rather than a fresh string, and a deploy id's or a process's string is made once
// per run of rows of the same deploy or process.
func scanEntries(rows pgx.Rows, appID string, limit int) ([]logs.Entry, error) {
	defer rows.Close()
	out := make([]logs.Entry, 0, limit)
	var (
		deploy         pgtype.UUID
		lastDeploy     pgtype.UUID
		lastDeployText string
	)
	var lastProcess string
	dest := []any{nil, nil, nil, &deploy, nil, nil} // stream and process (nil) are read raw below
	for rows.Next() {
		out = append(out, logs.Entry{AppID: appID})
		e := &out[len(out)-1]
		dest[0], dest[1], dest[4] = &e.ID, &e.Timestamp, &e.Message
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: read entries: %w", err)
		}
		e.Stream = streamOf(rows.RawValues()[2])
		// A page's lines come from a few processes in runs: one string per run, as for deploys.
		if raw := rows.RawValues()[5]; string(raw) != lastProcess {
			lastProcess = string(raw)
		}
		e.Process = lastProcess
		e.Timestamp = e.Timestamp.UTC()
		if deploy.Valid {
			if deploy != lastDeploy {
				lastDeploy, lastDeployText = deploy, uuid.UUID(deploy.Bytes).String()
			}
			e.DeployID = lastDeployText
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read entries: %w", err)
	}
	return out, nil
}

// streamOf is the stream of a row's raw stream column (text reads the same in either wire
// format). The table's check admits only the contract's streams; anything else is copied.
func streamOf(raw []byte) logs.Stream {
	for _, s := range logs.Streams {
		if string(raw) == string(s) {
			return s
		}
	}
	return logs.Stream(raw)
}

// streamSQL reads a live stream's next entries ($1 app, $2 from, $3 to, $4/$5 the floor
// cursor, $6 ids already sent, $7 limit). The (app_id, ts, id) index serves the range; the
// exclusion only filters the few seconds of entries the late allowance re-reads.
const streamSQL = `
		SELECT id, ts, stream, deploy_id, message, process FROM log_entries
		WHERE app_id = $1 AND ts >= $2 AND ts < $3 AND (ts, id) > ($4, $5) AND NOT (id = ANY($6))
		ORDER BY ts, id LIMIT $7`

// StreamEntries implements usecase.StreamSource.
func (s *Store) StreamEntries(ctx context.Context, appID string, from, to time.Time, floor logs.Cursor, exclude []int64, proc logs.ProcessFilter, limit int) ([]logs.Entry, error) {
	floorTS := floor.Timestamp
	if floorTS.IsZero() {
		floorTS = time.Unix(0, 0)
	}
	sql, args := withProcess(streamSQL, []any{appID, from, to, floorTS, floor.ID, exclude, limit}, proc)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: stream entries: %w", err)
	}
	return scanEntries(rows, appID, limit)
}

// AppLive implements usecase.StreamSource.
func (s *Store) AppLive(ctx context.Context, appID string) (bool, error) {
	var live bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM apps WHERE app_id = $1 AND deleted_at IS NULL)`, appID).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("store: app live: %w", err)
	}
	return live, nil
}
