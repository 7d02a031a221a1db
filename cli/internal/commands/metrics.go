package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/appmetrics"
	"tori.dev/contract/names"
)

// metricSteps are --step's values, as the API's step seconds (contract/appmetrics.Steps).
var metricSteps = map[string]int{"1m": 60, "5m": 300, "1h": 3600}

// MetricsFlags are `tori metrics`' flags, as typed.
type MetricsFlags struct {
	Metric, Since, Step, Process string
}

// ParseMetrics checks `tori metrics`' flags before anything is sent and makes the query:
// start is now less --since, end left to the API (now).
func ParseMetrics(f MetricsFlags, now time.Time) (api.MetricsQuery, error) {
	q := api.MetricsQuery{Metric: f.Metric, Process: f.Process}
	switch f.Metric {
	case appmetrics.Requests, appmetrics.Latency, appmetrics.CPU, appmetrics.Memory, appmetrics.Instances:
	default:
		return q, fmt.Errorf("--metric %q: want requests, latency, cpu, memory or instances", f.Metric)
	}
	since, err := ParseDuration("--since", f.Since)
	if err != nil {
		return q, err
	}
	q.Start = now.Add(-since).UTC().Format(time.RFC3339)
	if f.Step != "" {
		step, ok := metricSteps[f.Step]
		if !ok {
			return q, fmt.Errorf("--step %q: want 1m, 5m or 1h", f.Step)
		}
		q.Step = step
	}
	if f.Process != "" && !names.ProcessFilter(f.Process) {
		return q, fmt.Errorf("--process %q: want a process type (web) or one instance (web.1)", f.Process)
	}
	return q, nil
}

func (s *state) metricsCmd() *cobra.Command {
	f := MetricsFlags{Metric: appmetrics.Requests, Since: "1h"}
	var table bool
	c := &cobra.Command{
		Use:   "metrics",
		Short: "Show the app's requests, latency, CPU, memory or instances as sparklines",
		Long: "One line per series (a status class, a quantile, an instance), oldest to newest, one\n" +
			"character a --step, with its smallest, largest and last value; a gap is a step with nothing\n" +
			"to say (no requests for a latency, no sample). --table prints every point instead, one row a\n" +
			"step; --json the API's answer.",
		Example: "  tori metrics\n  tori metrics --metric latency --since 6h --step 5m\n  tori metrics --metric cpu --since 15m --table\n" +
			"  tori metrics --metric memory --process web --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := ParseMetrics(f, time.Now())
			if err != nil {
				return usageError{err}
			}
			show := s.printMetrics
			if table {
				show = s.printMetricsTable
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Metrics, api.Raw, error) {
				return s.client.Metrics(ctx, slug, q)
			}, show)
		},
	}
	s.appFlag(c, false)
	fl := c.Flags()
	fl.StringVar(&f.Metric, "metric", f.Metric, "requests (by status class), latency (p50, p95, p99), cpu, memory or instances")
	fl.StringVar(&f.Since, "since", f.Since, "how far back (30m, 6h, 7d; the plan keeps metrics 1 to 30 days)")
	fl.StringVar(&f.Step, "step", "", "one point per 1m (the default), 5m or 1h")
	fl.StringVar(&f.Process, "process", "", "one process type (web) or one instance (web.1)")
	fl.BoolVar(&table, "table", false, "every point, one row a step (time, then a column a series), instead of sparklines")
	return c
}

// seriesName is a series' labels in a word: 2xx, p95, web.1.
func seriesName(l api.MetricLabels) string {
	var parts []string
	if l.Status != "" {
		parts = append(parts, l.Status)
	}
	if l.Quantile != "" {
		q := strings.TrimPrefix(l.Quantile, "0.")
		if len(q) == 1 {
			q += "0"
		}
		parts = append(parts, "p"+q)
	}
	switch {
	case l.Instance != "":
		parts = append(parts, l.Instance)
	case l.Process != "":
		parts = append(parts, l.Process)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

func (s *state) printMetrics(m api.Metrics) error {
	step := time.Duration(m.Step) * time.Second
	s.ui.Printf("%s %s per %s, %s to %s\n", s.ui.Paint(ui.Bold, m.Metric), m.Unit, step, m.Start, m.End)
	if len(m.Series) == 0 {
		s.ui.Printf("Nothing in this window.\n")
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	for _, sr := range m.Series {
		values := make([]*float64, len(sr.Points))
		for i, p := range sr.Points {
			if len(p) > 1 {
				values[i] = p[1]
			}
		}
		lo, hi, any := spanOf(values)
		stats := "no data"
		if any {
			last := "-"
			for i := len(values) - 1; i >= 0; i-- {
				if values[i] != nil {
					last = formatValue(*values[i], m.Unit)
					break
				}
			}
			stats = fmt.Sprintf("min %s\tmax %s\tlast %s", formatValue(lo, m.Unit), formatValue(hi, m.Unit), last)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", seriesName(sr.Labels), Sparkline(values), stats)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if m.Limit != nil {
		s.ui.Printf("limit %s\n", formatValue(*m.Limit, m.Unit))
	}
	return nil
}

// printMetricsTable prints every point: a row a step (its start, RFC 3339 UTC), a column a
// series, "-" where the API says null.
func (s *state) printMetricsTable(m api.Metrics) error {
	if len(m.Series) == 0 {
		s.ui.Printf("Nothing in this window.\n")
		return nil
	}
	header := []string{"TIME"}
	rows := map[int64][]string{}
	var times []int64
	for i, sr := range m.Series {
		header = append(header, seriesName(sr.Labels))
		for _, p := range sr.Points {
			if len(p) < 2 || p[0] == nil {
				continue
			}
			t := int64(*p[0])
			if _, ok := rows[t]; !ok {
				rows[t] = make([]string, len(m.Series))
				for j := range rows[t] {
					rows[t][j] = "-"
				}
				times = append(times, t)
			}
			if p[1] != nil {
				rows[t][i] = formatValue(*p[1], m.Unit)
			}
		}
	}
	slices.Sort(times)
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, strings.Join(header, "\t")))
	for _, t := range times {
		fmt.Fprintf(w, "%s\t%s\n", time.Unix(t, 0).UTC().Format(time.RFC3339), strings.Join(rows[t], "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if m.Limit != nil {
		s.ui.Printf("limit %s\n", formatValue(*m.Limit, m.Unit))
	}
	return nil
}
