package api

import (
	"context"
	"net/url"
	"strconv"
)

// The shapes and calls of an app's log drains and metrics (issue #40), owned by the logs
// service. Checked against the document by drift_test.go like every other shape.

// Drain sends the app's log lines to the customer's collector: HTTPS (signed NDJSON) or
// syslog over TLS. URL comes back with any password and query values masked.
type Drain struct {
	ID             string  `json:"id"`
	URL            string  `json:"url"`
	Kind           string  `json:"kind"`
	Status         string  `json:"status"`
	CreatedAt      string  `json:"createdAt"`
	LastDeliveryAt *string `json:"lastDeliveryAt"`
	LastError      *string `json:"lastError"`
	Dropped24h     int64   `json:"dropped24h"`
	Delivered24h   int64   `json:"delivered24h"`
}

// DrainCreated is the answer to a new drain: the drain and, for HTTPS, the signing secret,
// answered this once. Flat rather than embedding Drain, so the drift check sees every field.
type DrainCreated struct {
	ID             string  `json:"id"`
	URL            string  `json:"url"`
	Kind           string  `json:"kind"`
	Status         string  `json:"status"`
	CreatedAt      string  `json:"createdAt"`
	LastDeliveryAt *string `json:"lastDeliveryAt"`
	LastError      *string `json:"lastError"`
	Dropped24h     int64   `json:"dropped24h"`
	Delivered24h   int64   `json:"delivered24h"`
	Secret         string  `json:"secret"`
}

type DrainCreate struct {
	URL string `json:"url"`
}

// DrainTest is one test line's fate: delivered with the receiver's status, or the error.
type DrainTest struct {
	Delivered bool   `json:"delivered"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
}

// MetricLabels name a series: the status class of requests, the quantile of latency, the
// process and instance of cpu, memory and instances.
type MetricLabels struct {
	Status   string `json:"status,omitempty"`
	Process  string `json:"process,omitempty"`
	Instance string `json:"instance,omitempty"`
	Quantile string `json:"quantile,omitempty"`
}

// MetricSeries is one series; each point is [unixSeconds, value], value null where there is
// nothing to say (no requests for a latency, no sample).
type MetricSeries struct {
	Labels MetricLabels `json:"labels"`
	Points [][]*float64 `json:"points"`
}

type Metrics struct {
	Metric string         `json:"metric"`
	Unit   string         `json:"unit"`
	Step   int            `json:"step"`
	Start  string         `json:"start"`
	End    string         `json:"end"`
	Series []MetricSeries `json:"series"`
	// Limit is memory's ceiling in bytes (the plan's or the sampled one), for memory only.
	Limit *float64 `json:"limit"`
}

// MetricsQuery is one read; empty fields are the API's defaults (requests, the last hour,
// 60 s, every process).
type MetricsQuery struct {
	Metric, Start, End, Process string
	Step                        int
}

var (
	OpListDrains  = &Operation{Method: "GET", Path: "/api/apps/{slug}/drains", Response: []Drain{}}
	OpCreateDrain = &Operation{Method: "POST", Path: "/api/apps/{slug}/drains", Request: DrainCreate{}, Response: DrainCreated{}}
	OpDeleteDrain = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/drains/{id}"}
	OpTestDrain   = &Operation{Method: "POST", Path: "/api/apps/{slug}/drains/{id}/test", Response: DrainTest{}}
	OpMetrics     = &Operation{Method: "GET", Path: "/api/apps/{slug}/metrics", Response: Metrics{}, Query: []string{"metric", "start", "end", "step", "process"}}
)

func (c *Client) ListDrains(ctx context.Context, slug string) ([]Drain, Raw, error) {
	return call[[]Drain](ctx, c, req{op: OpListDrains, params: []string{slug}})
}

func (c *Client) CreateDrain(ctx context.Context, slug, target string) (DrainCreated, Raw, error) {
	return call[DrainCreated](ctx, c, req{op: OpCreateDrain, params: []string{slug}, body: DrainCreate{URL: target}})
}

func (c *Client) DeleteDrain(ctx context.Context, slug, id string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpDeleteDrain, params: []string{slug, id}})
	return err
}

// TestDrain sends one test line to the drain now and says how the receiver answered.
func (c *Client) TestDrain(ctx context.Context, slug, id string) (DrainTest, Raw, error) {
	return call[DrainTest](ctx, c, req{op: OpTestDrain, params: []string{slug, id}})
}

func (c *Client) Metrics(ctx context.Context, slug string, mq MetricsQuery) (Metrics, Raw, error) {
	q := url.Values{}
	for k, v := range map[string]string{"metric": mq.Metric, "start": mq.Start, "end": mq.End, "process": mq.Process} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if mq.Step > 0 {
		q.Set("step", strconv.Itoa(mq.Step))
	}
	return call[Metrics](ctx, c, req{op: OpMetrics, params: []string{slug}, query: q})
}
