package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/store"
)

// flockRetentionDays is the flock plan's logRetentionDays (docs/conventions.md).
const flockRetentionDays = 30

// benchRead runs the control plane as processes, sets a customer's app up through the
// gateway, seeds the table with that app as the busiest, then times the busiest hour's first
// page through the gateway, at the logs service itself, and as plain SQL, alternating so all
// three see the same cache state.
func benchRead(ctx context.Context, db *scratch, o options) (err error) {
	s, err := startStack(ctx, db, o, stackServices, nil)
	if err != nil {
		return err
	}
	defer func() { s.stop(err != nil) }()
	c, err := newCustomer(ctx, s)
	if err != nil {
		return err
	}
	accountID, err := awaitLogsReady(ctx, s, db, c)
	if err != nil {
		return err
	}

	// The service made the schema at start; the seed and the SQL side use its role, as it does.
	pool, st, err := openStore(ctx, db)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer st.Close()
	end := time.Now().UTC().Truncate(time.Hour)
	gen := newGenerator(o.apps, end.Add(-time.Duration(o.days)*24*time.Hour), o.days*24, 7)
	gen.apps[0] = c.appID // the other apps stay unknown to the service, which stores them anyway
	if err := seed(ctx, db, st, gen, o.seedEntries); err != nil {
		return err
	}

	hour, n := gen.busiestHour(0)
	from := gen.t0.Add(time.Duration(hour) * time.Hour)
	w := window{slug: c.appSlug, appID: c.appID, from: from, to: from.Add(time.Hour), limit: o.limit}
	fmt.Printf("read: app %s (the busiest of %d), hour %s holds %d entries; first page of %d\n",
		c.appSlug, o.apps, from.Format(time.RFC3339), n, o.limit)
	paths := readPaths{
		gateway: newPageReader(s.gateway, w.path(), bearer(c.token)),
		service: newPageReader(s.logs, w.path(), signed(s.key, accountID)),
		sql:     func() (time.Duration, error) { return sqlPage(ctx, pool, w) },
	}
	// The floor serves the very bytes the route answers.
	_, page, err := paths.gateway.once(ctx)
	if err != nil {
		return err
	}
	f, err := startFloor(ctx, bytes.Clone(page), w.path())
	if err != nil {
		return err
	}
	defer f.stop()
	paths.bare, paths.relayed = f.bare, f.relayed
	done := profileReads(s.profiles, o.profileDir, o.samples)
	if err := measure(ctx, paths, o.samples); err != nil {
		return err
	}
	return done()
}

// awaitLogsReady waits until the logs service has the app (from apps.app.created) and the
// account's flock plan (from billing.account.plan_changed), and returns the account id the
// service stored, which signing a request to the service directly needs. It asks the
// service itself, so the gateway's per-account read limit is left to the measurement.
func awaitLogsReady(ctx context.Context, s *stack, db *scratch, c *customer) (string, error) {
	var accountID string
	err := poll(ctx, 30*time.Second, "the logs service to learn of the app", func() (bool, error) {
		err := db.queryRow(ctx, `SELECT account_id FROM logs.apps WHERE app_id = $1`, c.appID).Scan(&accountID)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return "", err
	}
	probe := newPageReader(s.logs, "/api/apps/"+c.appSlug+"/logs?limit=1", signed(s.key, accountID))
	err = poll(ctx, 30*time.Second, "the logs service to apply plan flock", func() (bool, error) {
		p, err := probe.page(ctx)
		return err == nil && p.RetentionDays == flockRetentionDays, err
	})
	return accountID, err
}

func openStore(ctx context.Context, db *scratch) (*pgxpool.Pool, *store.Store, error) {
	url, err := pgstore.ServiceURL(db.url, store.Service(""))
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgstore.Open(ctx, url, store.PoolSettings...)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, st, nil
}

// window is the page every path reads.
type window struct {
	slug, appID string
	from, to    time.Time
	limit       int
}

func (w window) path() string {
	return fmt.Sprintf("/api/apps/%s/logs?start=%s&end=%s&limit=%d",
		w.slug, w.from.Format(time.RFC3339), w.to.Format(time.RFC3339), w.limit)
}

// sqlPage runs the route's statement with the route's bounds and reads every row, as the
// store does; the store asks for one row more than the page to know whether there is a next.
func sqlPage(ctx context.Context, pool *pgxpool.Pool, w window) (time.Duration, error) {
	start := time.Now()
	rows, err := pool.Query(ctx, store.PageFirstSQL, w.appID, w.from, w.to, w.limit+1)
	if err != nil {
		return 0, err
	}
	var (
		id      int64
		ts      time.Time
		stream  string
		deploy  pgtype.UUID
		message string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &ts, &stream, &deploy, &message}, func() error { return nil })
	return time.Since(start), err
}
