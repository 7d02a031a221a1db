package metrics

import "tori.dev/contract/appmetrics"

// Quantiles the latency metric reports, as its labels name them.
var Quantiles = []struct {
	Q     float64
	Label string
}{{0.5, "0.5"}, {0.95, "0.95"}, {0.99, "0.99"}}

// Quantile estimates the q-quantile (0 < q <= 1) in milliseconds of a latency histogram
// over appmetrics.LatencyBoundsMillis plus the overflow bucket, as Prometheus's
// histogram_quantile does: the bucket holding the rank q·total is found from the cumulative
// counts, and the value interpolated linearly between its lower and upper bound by how far
// into the bucket the rank falls (the first bucket's lower bound is 0). The overflow bucket
// has no upper bound: it reports its lower bound, the last bound. ok is false for an empty
// histogram. For q1 < q2 the rank is no lower, so the bucket is no earlier and, within one
// bucket, the value no lower: the estimate is monotone in q.
func Quantile(buckets []int64, q float64) (ms float64, ok bool) {
	bounds := appmetrics.LatencyBoundsMillis
	var total int64
	for _, c := range buckets {
		if c > 0 {
			total += c
		}
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var below float64 // requests in the buckets before i
	for i, c := range buckets {
		if c <= 0 {
			continue
		}
		count := float64(c)
		if below+count < rank && i < len(buckets)-1 {
			below += count
			continue
		}
		lower := 0.0
		if i > 0 {
			lower = bounds[min(i, len(bounds))-1]
		}
		if i >= len(bounds) {
			return lower, true // the overflow bucket: no upper bound to interpolate to
		}
		return lower + (bounds[i]-lower)*(rank-below)/count, true
	}
	return 0, false // unreachable: total > 0 means some bucket holds the rank
}
