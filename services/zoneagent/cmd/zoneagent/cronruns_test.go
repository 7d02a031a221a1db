package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// cronReports are the zone's relayed reports of a run (sent to the broker, so the zone may
// publish them).
func cronReports(t *testing.T, z *testinfra.Running, runID string) []*zonev1.CronRunProgress {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, z.Env["ZONEAGENT_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 AND sent_at IS NOT NULL ORDER BY seq`, zonebus.KeyCronProgressed)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var out []*zonev1.CronRunProgress
	for _, b := range bodies {
		var m zonev1.CronRunProgress
		if proto.Unmarshal(b, &m) == nil && m.GetRunId() == runID {
			out = append(out, &m)
		}
	}
	return out
}

// The deploys service's cron run command reaches the zone on its own queue, and the zone's
// report goes out on zone.cron.progressed: a run for a deploy the zone never had fails at
// once, saying so, and the same command delivered again (a redelivery) is reported once.
func TestCronRunCommandIsReportedOnce(t *testing.T) {
	z := startZone(t)
	ns := z.Env["BUS_NAMESPACE"]
	run := &zonev1.StartCronRun{RunId: uuid.NewString(), AppId: uuid.NewString(), DeployId: uuid.NewString(),
		Job: "nightly", Command: "echo hi", TimeoutSeconds: 60}
	key := zonebus.CommandKey("local", zonebus.CommandCronRun)
	publishAs(t, ns, bus.PrincipalDeploys, key, run)
	testinfra.Eventually(t, 20*time.Second, "the run reported", func() bool { return len(cronReports(t, z, run.RunId)) > 0 })
	publishAs(t, ns, bus.PrincipalDeploys, key, run)
	// A later run on the same queue, reported once the redelivery was handled.
	later := proto.Clone(run).(*zonev1.StartCronRun)
	later.RunId = uuid.NewString()
	publishAs(t, ns, bus.PrincipalDeploys, key, later)
	testinfra.Eventually(t, 20*time.Second, "the later run reported", func() bool { return len(cronReports(t, z, later.RunId)) > 0 })
	got := cronReports(t, z, run.RunId)
	if len(got) != 1 || got[0].GetStatus() != zonev1.CronRunStatus_CRON_RUN_STATUS_FAILED ||
		got[0].GetMessage() != "this zone has no record of the run's deploy" || got[0].GetZone() != "local" || got[0].GetExitCode() != -1 {
		t.Fatalf("reports %v", got)
	}
}
