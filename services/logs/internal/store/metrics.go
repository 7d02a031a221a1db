package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/contract/appmetrics"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
	"tori.dev/services/logs/internal/usecase"
)

// The report's request rows go in one statement: the per-app arrays travel flattened
// ($4 counts, $5 buckets, each app's slice of fixed width) and are cut back per row, so a
// report of many apps is one round trip. A report already kept (same report_id and app)
// changes nothing.
const insertRequestsSQL = `
	INSERT INTO metric_requests (app_id, minute, report_id, counts, buckets, sum_millis)
	SELECT a.app_id, $1, $2,
	       ($4::bigint[])[(a.i - 1) * $6 + 1 : a.i * $6],
	       ($5::bigint[])[(a.i - 1) * $7 + 1 : a.i * $7],
	       a.sum_millis
	FROM unnest($3::uuid[], $8::float8[]) WITH ORDINALITY AS a(app_id, sum_millis, i)
	ON CONFLICT (report_id, app_id, minute) DO NOTHING`

const insertUsageSQL = `
	INSERT INTO metric_usage (app_id, minute, report_id, instance, cpu_cores, mem_bytes, limit_bytes)
	SELECT u.app_id, $1, $2, u.instance, u.cpu, u.mem, u.lim
	FROM unnest($3::uuid[], $4::text[], $5::float8[], $6::bigint[], $7::bigint[]) AS u(app_id, instance, cpu, mem, lim)
	ON CONFLICT (report_id, app_id, instance, minute) DO NOTHING`

// SaveReport stores a report's rows in the transaction; rows of a report already kept are
// skipped. The partition of the report's day must exist (EnsureMetricPartitions). It returns
// how many rows were new.
func (d queries) SaveReport(ctx context.Context, r metrics.Report) (int64, error) {
	var stored int64
	if len(r.Requests) > 0 {
		nc, nb := len(appmetrics.StatusClasses), len(appmetrics.LatencyBoundsMillis)+1
		apps := make([]string, len(r.Requests))
		sums := make([]float64, len(r.Requests))
		counts := make([]int64, 0, nc*len(r.Requests))
		buckets := make([]int64, 0, nb*len(r.Requests))
		for i, q := range r.Requests {
			if len(q.Counts) != nc || len(q.Buckets) != nb {
				return 0, fmt.Errorf("store: report %s: app %s's counts are not of the contract's shape", r.ID, q.AppID)
			}
			apps[i], sums[i] = q.AppID, q.SumMillis
			counts = append(counts, q.Counts...)
			buckets = append(buckets, q.Buckets...)
		}
		tag, err := d.q.Exec(ctx, insertRequestsSQL, r.Minute, r.ID, apps, counts, buckets, nc, nb, sums)
		if err != nil {
			return 0, d.metricsWriteError("request counts", err)
		}
		stored += tag.RowsAffected()
	}
	if len(r.Usage) > 0 {
		n := len(r.Usage)
		apps, inst := make([]string, n), make([]string, n)
		cpu, mem, lim := make([]float64, n), make([]int64, n), make([]int64, n)
		for i, u := range r.Usage {
			apps[i], inst[i], cpu[i], mem[i], lim[i] = u.AppID, u.Instance, u.CPUCores, u.MemBytes, u.LimitBytes
		}
		tag, err := d.q.Exec(ctx, insertUsageSQL, r.Minute, r.ID, apps, inst, cpu, mem, lim)
		if err != nil {
			return 0, d.metricsWriteError("instance usage", err)
		}
		stored += tag.RowsAffected()
	}
	return stored, nil
}

// metricsWriteError turns a missing partition into ErrNoPartition (the message's retry
// recreates it), as CopyEntries does.
func (d queries) metricsWriteError(what string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23514" && pe.ConstraintName == "" {
		d.parts.reset()
		return fmt.Errorf("%w: %s", ErrNoPartition, pe.Message)
	}
	return fmt.Errorf("store: save %s: %w", what, err)
}

// stepOf is the SQL of the start of the step a row's minute falls in, in Unix seconds ($4 the
// step): steps align on the epoch, as metrics.Query.First does.
const stepOf = `(extract(epoch FROM minute)::bigint / $4::bigint) * $4::bigint`

// RequestsSQL and LatencySQL sum an app's request counts or latency buckets per step, one
// column per array index ($1 app, $2 from, $3 to, $4 step): the (app_id, minute) index selects
// the rows, and each row is read once (unnesting the arrays made 5 or 22 rows of each and cost
// a 30-day read seconds). Exported so that the plan's test runs them.
var (
	RequestsSQL = stepSumsSQL("counts", len(appmetrics.StatusClasses))
	LatencySQL  = stepSumsSQL("buckets", len(appmetrics.LatencyBoundsMillis)+1)
)

func stepSumsSQL(column string, width int) string {
	var b strings.Builder
	b.WriteString("\n\tSELECT " + stepOf + " AS t")
	for i := 1; i <= width; i++ {
		fmt.Fprintf(&b, ", COALESCE(sum(%s[%d]), 0)::bigint", column, i)
	}
	b.WriteString(`
	FROM metric_requests
	WHERE app_id = $1 AND minute >= $2 AND minute < $3
	GROUP BY 1`)
	return b.String()
}

// usageSQL reads an app's instance use per step and instance (UsageQuery adds the filter).
const usageSQL = `
	SELECT ` + stepOf + ` AS t, instance, avg(cpu_cores), max(mem_bytes), max(limit_bytes)
	FROM metric_usage
	WHERE app_id = $1 AND minute >= $2 AND minute < $3`

// stepSums runs RequestsSQL or LatencySQL (width sums a row) and returns the sums per step
// and array index (0-based), zeros left out.
func (s *Store) stepSums(ctx context.Context, sql string, width int, appID string, from, to time.Time, step int) ([]metrics.StepSum, error) {
	rows, err := s.pool.Query(ctx, sql, appID, from, to, int64(step))
	if err != nil {
		return nil, fmt.Errorf("store: read metrics: %w", err)
	}
	defer rows.Close()
	var (
		out  []metrics.StepSum
		t    int64
		sums = make([]int64, width)
		dest = make([]any, width+1)
	)
	dest[0] = &t
	for i := range sums {
		dest[i+1] = &sums[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: read metrics: %w", err)
		}
		for i, v := range sums {
			if v != 0 {
				out = append(out, metrics.StepSum{T: t, Index: i, Sum: v})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read metrics: %w", err)
	}
	return out, nil
}

// RequestSums implements usecase.MetricsStore.
func (s *Store) RequestSums(ctx context.Context, appID string, from, to time.Time, step int) ([]metrics.StepSum, error) {
	return s.stepSums(ctx, RequestsSQL, len(appmetrics.StatusClasses), appID, from, to, step)
}

// LatencySums implements usecase.MetricsStore.
func (s *Store) LatencySums(ctx context.Context, appID string, from, to time.Time, step int) ([]metrics.StepSum, error) {
	return s.stepSums(ctx, LatencySQL, len(appmetrics.LatencyBoundsMillis)+1, appID, from, to, step)
}

// UsageQuery is the statement and arguments of the usage read, with proc's condition as the
// entries' filter words it.
func UsageQuery(appID string, from, to time.Time, step int, proc logs.ProcessFilter) (string, []any) {
	sql, args := usageSQL, []any{appID, from, to, int64(step)}
	if !proc.Any() {
		sql += ` AND split_part(instance, '.', 1) = $5`
		args = append(args, proc.Type)
		if proc.Exact != "" {
			sql += ` AND instance = $6`
			args = append(args, proc.Exact)
		}
	}
	return sql + ` GROUP BY 1, 2`, args
}

// InstanceUsage implements usecase.MetricsStore: per step and instance, the average cores,
// the largest memory and the largest limit sampled.
func (s *Store) InstanceUsage(ctx context.Context, appID string, from, to time.Time, step int, proc logs.ProcessFilter) ([]metrics.StepUsage, error) {
	sql, args := UsageQuery(appID, from, to, step, proc)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (metrics.StepUsage, error) {
		var v metrics.StepUsage
		err := row.Scan(&v.T, &v.Instance, &v.CPUCores, &v.MemBytes, &v.LimitBytes)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: read usage: %w", err)
	}
	return out, nil
}

// DeleteAppMetrics removes every metrics row of appID (a deleted app's cleanup), one statement
// per partition: a day holds at most a few thousand rows of one app, so each is a short
// transaction on the (app_id, minute) index.
func (s *Store) DeleteAppMetrics(ctx context.Context, appID string) (int64, error) {
	days, err := s.MetricPartitions(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, day := range days {
		for _, t := range metricTables {
			tag, err := s.pool.Exec(ctx, `DELETE FROM `+pgx.Identifier{metricPartitionName(t, day)}.Sanitize()+` WHERE app_id = $1`, appID)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42P01" {
				continue // retention dropped the partition meanwhile
			}
			if err != nil {
				return total, fmt.Errorf("store: delete metrics of %s: %w", appID, err)
			}
			total += tag.RowsAffected()
		}
	}
	return total, nil
}

// BindMetrics is the store inside tx, the transaction a bus consumer opened for a message.
func (s *Store) BindMetrics(tx bus.Tx) usecase.MetricsTx { return s.bind(tx.Pgx()) }

// InMetricsTx implements usecase.MetricsStore.
func (s *Store) InMetricsTx(ctx context.Context, fn func(tx usecase.MetricsTx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(s.bind(tx)) })
}

var _ usecase.MetricsStore = (*Store)(nil)
