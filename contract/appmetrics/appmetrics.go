// Package appmetrics is the shape of the customer's metrics that the zone's edges count and
// the logs service keeps (API "Metrics"): the latency histogram's bucket bounds, the status
// classes and the steps a read may ask for. Both sides read the same values here.
package appmetrics

// LatencyBoundsMillis are the upper bounds of the latency histogram's buckets in
// milliseconds; a report carries one more bucket at the end for anything slower.
var LatencyBoundsMillis = []float64{1, 2, 5, 10, 20, 35, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 30000}

// StatusClasses are the labels of the requests metric, by index of a report's counts.
var StatusClasses = []string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// StatusClass is the index in StatusClasses of an HTTP status, or -1 outside 100–599.
func StatusClass(status int) int {
	if status < 100 || status > 599 {
		return -1
	}
	return status/100 - 1
}

// Bucket is the index of the histogram bucket a latency in milliseconds falls in.
func Bucket(millis float64) int {
	for i, b := range LatencyBoundsMillis {
		if millis <= b {
			return i
		}
	}
	return len(LatencyBoundsMillis)
}

// Steps a metrics read may ask for, in seconds.
var Steps = []int{60, 300, 3600}

// Metric names of GET /api/apps/{slug}/metrics.
const (
	Requests  = "requests"
	Latency   = "latency"
	CPU       = "cpu"
	Memory    = "memory"
	Instances = "instances"
)
