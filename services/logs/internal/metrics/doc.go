// Package metrics is the customer's metrics as the logs service keeps and serves them (no
// I/O): a zone's report, the read's parameters and their rules, retention, the latency
// quantile estimate and the series of an answer. The shapes shared with the zone (bucket
// bounds, status classes, steps, metric names) are contract/appmetrics.
package metrics
