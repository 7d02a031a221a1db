//go:build chaos

package chaos

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// cronProbe is an every-minute cron job on one of the load's apps, disabled so that its ticks
// reach no zone: each due tick must still leave exactly one run (skipped/disabled), however
// the deploys replicas that fire them are killed and restarted. It is written straight into
// deploys' schema, as the API stores a job made with the test-only
// DEPLOYS_CRON_MIN_INTERVAL_MINUTES=1, so the chaos stack runs with the plans' real limits.
type cronProbe struct {
	s     *harness.Stack
	jobID string
	from  time.Time // its first tick
}

func psql(t *testing.T, s *harness.Stack, sql string) string {
	t.Helper()
	out, err := exec.Command("psql", s.Env["DATABASE_URL"], "-v", "ON_ERROR_STOP=1", "-Atc", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q: %v %s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

// startCronProbe waits for deploys' copy of appID, then adds the job.
func startCronProbe(t *testing.T, s *harness.Stack, appID string) *cronProbe {
	harness.Eventually(t, 30*time.Second, "deploys' copy of the app", func() bool {
		return psql(t, s, fmt.Sprintf(`SELECT count(*) FROM deploys.apps WHERE id = '%s'`, appID)) == "1"
	})
	row := psql(t, s, fmt.Sprintf(`INSERT INTO deploys.cron_jobs (id, app_id, name, schedule, timezone, command,
		concurrency_policy, timeout_seconds, enabled, next_run_at, created_at, updated_at)
		VALUES (gen_random_uuid(), '%s', 'chaos-probe', '* * * * *', 'UTC', 'true', 'forbid', 60, false,
			date_trunc('minute', now()) + interval '1 minute', now(), now())
		RETURNING id, extract(epoch FROM next_run_at)::bigint`, appID))
	id, epoch, _ := strings.Cut(row, "|")
	var sec int64
	fmt.Sscan(epoch, &sec)
	return &cronProbe{s: s, jobID: id, from: time.Unix(sec, 0).UTC()}
}

// check counts the probe's runs: one per minute from its first tick to the last one due,
// none twice, none missing.
func (p *cronProbe) check(t *testing.T) (ticks int, err error) {
	t.Helper()
	row := psql(t, p.s, fmt.Sprintf(`SELECT count(*), count(DISTINCT scheduled_for),
		count(*) FILTER (WHERE status <> 'skipped' OR skip_reason <> 'disabled'),
		coalesce(extract(epoch FROM min(scheduled_for))::bigint, 0), coalesce(extract(epoch FROM max(scheduled_for))::bigint, 0),
		extract(epoch FROM (SELECT next_run_at FROM deploys.cron_jobs WHERE id = '%[1]s'))::bigint
		FROM deploys.cron_runs WHERE job_id = '%[1]s'`, p.jobID))
	var runs, distinct, odd int
	var first, last, next int64
	if _, err := fmt.Sscanf(strings.ReplaceAll(row, "|", " "), "%d %d %d %d %d %d", &runs, &distinct, &odd, &first, &last, &next); err != nil {
		return 0, fmt.Errorf("cron probe row %q: %v", row, err)
	}
	want := int((next - p.from.Unix()) / 60)
	switch {
	case runs == 0:
		return 0, fmt.Errorf("cron probe: no tick fired")
	case runs != distinct:
		return runs, fmt.Errorf("cron probe: %d runs for %d ticks (a tick fired twice)", runs, distinct)
	case first != p.from.Unix() || next != last+60 || runs != want:
		return runs, fmt.Errorf("cron probe: %d runs from %s to %s, want %d from %s (a tick left no run)", runs,
			time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC(), want, p.from)
	case odd != 0:
		return runs, fmt.Errorf("cron probe: %d runs not skipped/disabled", odd)
	}
	return runs, nil
}
