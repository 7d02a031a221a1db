package config

import (
	"context"
	"testing"
	"time"

	pkgconfig "tori.dev/pkg/config"
)

// The metrics settings: counting on, a 10 s flush and a minute's sample by default; a flush
// longer than a minute (the counter's two slots need a collection each minute), a sample
// interval under a second, or EDGE_METRICS other than on/off stop the agent at start. The
// edge process gets its two settings (config.EdgeProcess holds them).
func TestMetricsSettings(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{})); err != nil {
		t.Fatal(err)
	}
	if !c.Counting() || c.MetricsFlushInterval != 10*time.Second || c.MetricsSampleInterval != time.Minute {
		t.Fatalf("defaults: counting %v, flush %v, sample %v", c.Counting(), c.MetricsFlushInterval, c.MetricsSampleInterval)
	}
	var off Config
	if err := pkgconfig.LoadMap(context.Background(), &off, withCredentials(map[string]string{"EDGE_METRICS": "off"})); err != nil || off.Counting() {
		t.Fatalf("EDGE_METRICS=off: counting %v, %v", off.Counting(), err)
	}
	for _, env := range []map[string]string{
		{"EDGE_METRICS": "yes"}, {"ZONE_METRICS_FLUSH_INTERVAL": "2m"}, {"ZONE_METRICS_FLUSH_INTERVAL": "0s"},
		{"ZONE_METRICS_SAMPLE_INTERVAL": "10ms"},
	} {
		var c Config
		if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(env)); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	edge := pkgconfig.Describe(&EdgeProcess{})
	for _, k := range []string{"EDGE_METRICS", "ZONE_METRICS_FLUSH_INTERVAL"} {
		if _, ok := edge[k]; !ok {
			t.Errorf("the edge process is not given %s", k)
		}
	}
}
