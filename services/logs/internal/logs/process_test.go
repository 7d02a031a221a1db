package logs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProcessFilter(t *testing.T) {
	cases := []struct {
		raw     string
		want    ProcessFilter
		invalid bool
		matches []string
		misses  []string
	}{
		{raw: "", want: ProcessFilter{}, matches: []string{"", "web.1", "cron.a.b"}},
		{raw: "worker", want: ProcessFilter{Type: "worker"}, matches: []string{"worker.1", "worker.10"}, misses: []string{"", "workers.1", "web.1"}},
		{raw: "worker.2", want: ProcessFilter{Type: "worker", Exact: "worker.2"}, matches: []string{"worker.2"}, misses: []string{"worker.20", "worker.1", "worker"}},
		{raw: "cron", want: ProcessFilter{Type: "cron"}, matches: []string{"cron.nightly.019a", "cron.x.1"}, misses: []string{"crontab.1"}},
		{raw: "cron.nightly.019a8f3e-7c1d", want: ProcessFilter{Type: "cron", Exact: "cron.nightly.019a8f3e-7c1d"}, matches: []string{"cron.nightly.019a8f3e-7c1d"}, misses: []string{"cron.nightly.2"}},
		{raw: "a" + strings.Repeat("b", 29), want: ProcessFilter{Type: "a" + strings.Repeat("b", 29)}},
		{raw: "a" + strings.Repeat("b", 30), invalid: true},
		{raw: "web." + strings.Repeat("1", 81), invalid: true},
		{raw: "Web", invalid: true},
		{raw: "9web", invalid: true},
		{raw: "-web", invalid: true},
		{raw: "worker.", invalid: true},
		{raw: ".1", invalid: true},
		{raw: "a.b.c.d", invalid: true},
		{raw: "web_1", invalid: true},
		{raw: "web.1 ", invalid: true},
		{raw: "web.%", invalid: true},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			q, err := ParseQuery(RawQuery{Process: tc.raw}, time.Now())
			sq, serr := ParseStreamQuery(RawStreamQuery{Process: tc.raw}, time.Now())
			if tc.invalid {
				var ip *InvalidParameterError
				if !errors.As(err, &ip) || ip.Name != "process" || !errors.As(serr, &ip) || ip.Name != "process" {
					t.Fatalf("window %v, stream %v: want invalid process", err, serr)
				}
				return
			}
			if err != nil || serr != nil {
				t.Fatalf("window %v, stream %v", err, serr)
			}
			if q.Process != tc.want || sq.Process != tc.want {
				t.Fatalf("window %+v, stream %+v, want %+v", q.Process, sq.Process, tc.want)
			}
			for _, p := range tc.matches {
				if !tc.want.Matches(p) {
					t.Errorf("%q does not match %q", tc.raw, p)
				}
			}
			for _, p := range tc.misses {
				if tc.want.Matches(p) {
					t.Errorf("%q matches %q", tc.raw, p)
				}
			}
		})
	}
}
