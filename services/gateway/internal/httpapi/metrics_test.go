package httpapi_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// counterValue is the sum of family's series with label=value on the default registry, what
// the gateway's /metrics shows.
func counterValue(t *testing.T, family, label, value string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// Each refusal counts once under its code, and the request is counted under its route
// template with its 429.
func TestRateLimitRefusalsAreCounted(t *testing.T) {
	h := start(t, options{authLimit: 1})
	limitedBefore := counterValue(t, "tori_gateway_rate_limit_refusals_total", "code", "rate_limited")
	slowBefore := counterValue(t, "tori_gateway_rate_limit_refusals_total", "code", "slow_down")

	expect(t, h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`)), 200, "")
	limited(t, h.do("POST", "/api/auth/magic-link", "", strings.NewReader(`{}`)), "rate_limited", quarterLeft)
	expect(t, h.do("POST", "/api/auth/cli/token", "", strings.NewReader(`{"deviceCode":"unknown"}`)), 400, `{"error":"invalid_grant"}`)
	limited(t, h.do("POST", "/api/auth/cli/token", "", strings.NewReader(`{"deviceCode":"pending"}`)), "slow_down", quarterLeft)

	if d := counterValue(t, "tori_gateway_rate_limit_refusals_total", "code", "rate_limited") - limitedBefore; d != 1 {
		t.Errorf("rate_limited refusals moved by %v, want 1", d)
	}
	if d := counterValue(t, "tori_gateway_rate_limit_refusals_total", "code", "slow_down") - slowBefore; d != 1 {
		t.Errorf("slow_down refusals moved by %v, want 1", d)
	}
	if counterValue(t, "tori_http_requests_total", "code", "429") < 2 {
		t.Error("the 429s are not among tori_http_requests_total")
	}
}
