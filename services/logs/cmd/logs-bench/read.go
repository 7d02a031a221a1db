package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/store"
)

const benchAccount = "bench-account"

// benchRead seeds the table, then times the busiest hour's first page through the route and
// as plain SQL, alternating so both see the same cache state.
func benchRead(ctx context.Context, db *scratch, o options) error {
	pool, err := pgstore.Setup(ctx, db.url, store.Service(""), bus.Migrations, store.Migrations)
	if err != nil {
		return err
	}
	defer pool.Close()
	st, err := store.New(ctx, pool)
	if err != nil {
		return err
	}
	defer st.Close()

	end := time.Now().UTC().Truncate(time.Hour)
	gen := newGenerator(o.apps, end.Add(-time.Duration(o.days)*24*time.Hour), o.days*24, 7)
	if err := seed(ctx, db, st, gen, o.seedEntries); err != nil {
		return err
	}
	for i, id := range gen.apps {
		if err := st.SaveApp(ctx, pool, store.App{ID: id, AccountID: benchAccount, Slug: slugOf(i)}, gen.t0); err != nil {
			return err
		}
	}
	if err := st.SavePlan(ctx, pool, store.Plan{AccountID: benchAccount, Name: "flock", RetentionDays: 30, Version: 1}); err != nil {
		return err
	}

	svc, err := startService(ctx, db, busConfig(o))
	if err != nil {
		return err
	}
	defer svc.stop()

	app, hour, n := gen.busiest()
	from := gen.t0.Add(time.Duration(hour) * time.Hour)
	to := from.Add(time.Hour)
	fmt.Printf("read: busiest app %s, hour %s holds %d entries; first page of %d, %d samples per path after warm-up\n",
		slugOf(app), from.Format(time.RFC3339), n, o.limit, o.samples)

	httpRead := newRouteReader(svc.addr, slugOf(app), from, to, o.limit)
	if err := httpRead.check(); err != nil {
		return err
	}
	sqlRead := func() (time.Duration, error) { return sqlPage(ctx, pool, gen.apps[app], from, to, o.limit+1) }
	var viaHTTP, viaSQL []time.Duration
	for i := range o.samples + o.samples/10 {
		dh, err := httpRead.once()
		if err != nil {
			return err
		}
		ds, err := sqlRead()
		if err != nil {
			return err
		}
		if i >= o.samples/10 { // the first tenth warms caches and connections
			viaHTTP, viaSQL = append(viaHTTP, dh), append(viaSQL, ds)
		}
	}
	h50, h99 := percentile(viaHTTP, 50), percentile(viaHTTP, 99)
	s50, s99 := percentile(viaSQL, 50), percentile(viaSQL, 99)
	fmt.Printf("  HTTP route of the logs service (no gateway)  p50 %s  p99 %s\n", ms(h50), ms(h99))
	fmt.Printf("  plain SQL, same statement and table          p50 %s  p99 %s\n", ms(s50), ms(s99))
	fmt.Printf("  ratio HTTP / SQL                             p50 %.2fx  p99 %.2fx\n", float64(h50)/float64(s50), float64(h99)/float64(s99))
	return nil
}

func slugOf(i int) string { return fmt.Sprintf("bench-%03d", i) }

// sqlPage runs the route's statement and reads every row, as the store does.
func sqlPage(ctx context.Context, pool *pgxpool.Pool, appID string, from, to time.Time, limit int) (time.Duration, error) {
	start := time.Now()
	rows, err := pool.Query(ctx, store.PageFirstSQL, appID, from, to, limit)
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

// routeReader reads one page through the service's HTTP route, signed like the gateway does.
type routeReader struct {
	client *http.Client
	base   string
	path   string
}

func newRouteReader(addr, slug string, from, to time.Time, limit int) *routeReader {
	q := url.Values{"start": {from.Format(time.RFC3339)}, "end": {to.Format(time.RFC3339)}, "limit": {fmt.Sprint(limit)}}
	return &routeReader{
		client: &http.Client{Timeout: 30 * time.Second},
		base:   "http://" + addr,
		path:   "/api/apps/" + slug + "/logs?" + q.Encode(),
	}
}

func (r *routeReader) do() (time.Duration, []byte, error) {
	req, err := http.NewRequest("GET", r.base+r.path, nil)
	if err != nil {
		return 0, nil, err
	}
	// Signing is the gateway's work, so it stays out of the timing.
	callerid.Sign([]byte(signingKey), req.Header.Set, callerid.Caller{AccountID: benchAccount, UserID: "bench", TokenKind: callerid.KindAPI, TokenID: "bench"}, "GET", r.path, time.Now())
	start := time.Now()
	res, err := r.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, nil, err
	}
	if res.StatusCode != 200 {
		return 0, nil, fmt.Errorf("route answered %d: %s", res.StatusCode, body)
	}
	return d, body, nil
}

func (r *routeReader) once() (time.Duration, error) {
	d, _, err := r.do()
	return d, err
}

// check makes sure the route answers with entries and says how big a page is.
func (r *routeReader) check() error {
	_, body, err := r.do()
	if err != nil {
		return err
	}
	var page struct {
		Entries []json.RawMessage `json:"entries"`
		Next    *string           `json:"next"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return err
	}
	if len(page.Entries) == 0 {
		return fmt.Errorf("route returned no entries")
	}
	note := ""
	if page.Next == nil {
		note = " (the hour holds less than a page: seed more for a full one)"
	}
	fmt.Printf("  one page is %d entries, %d bytes of JSON%s\n", len(page.Entries), len(body), note)
	return nil
}
