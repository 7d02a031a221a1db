package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// jaegerTrace is one trace as Jaeger's query API returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		OperationName string `json:"operationName"`
		ProcessID     string `json:"processID"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// With traces on, one source deploy is one trace in the store: the gateway's request, the
// deploys service, the bus between them and the zone, and the zone agent's build and start,
// with database calls inside.
func TestADeployIsOneTrace(t *testing.T) {
	store := harness.StartTraceStore(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN":        "100000",
		"OTEL_EXPORTER_OTLP_ENDPOINT": store.OTLP,
		"OTEL_BSP_SCHEDULE_DELAY":     "200", // ms: spans reach the store soon after they end
	}})
	a := s.NewAccount(t, "traces")
	slug := createApp(t, s, a.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js", "build": "echo built"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"t"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")

	var found jaegerTrace
	var seen []string
	harness.Eventually(t, 30*time.Second, "one trace from the gateway to the zone's build and start", func() bool {
		q := url.Values{"service": {"zoneagent"}, "operation": {"zone start"}, "limit": {"20"}, "lookback": {"1h"}}
		resp, err := http.Get(store.Query + "/api/traces?" + q.Encode())
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct{ Data []jaegerTrace }
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
			return false
		}
		for _, tr := range body.Data {
			ops, services := map[string]bool{}, map[string]bool{}
			for _, sp := range tr.Spans {
				ops[sp.OperationName] = true
				services[tr.Processes[sp.ProcessID].ServiceName] = true
				if strings.HasPrefix(sp.OperationName, "publish ") || strings.HasPrefix(sp.OperationName, "consume ") {
					ops["bus"] = true
				}
				if strings.HasPrefix(sp.OperationName, "postgres ") {
					ops["postgres"] = true
				}
			}
			seen = seen[:0]
			for svc := range services {
				seen = append(seen, svc)
			}
			if services["gateway"] && services["deploys"] && services["zoneagent"] &&
				ops["bus"] && ops["postgres"] && ops["zone build"] && ops["zone start"] {
				found = tr
				return true
			}
		}
		return false
	})
	t.Logf("trace %s: %d spans from %v", found.TraceID, len(found.Spans), seen)
}
