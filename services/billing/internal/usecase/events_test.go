package usecase_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

// The bus form carries every limit of the catalog, the process and cron ones included, written
// out here so that a limit the mapping forgets fails (the bus tests compare with the mapping).
func TestLimitsMessageCarriesEveryLimit(t *testing.T) {
	flock, err := catalog.Lookup("flock")
	if err != nil {
		t.Fatal(err)
	}
	want := &billingv1.PlanLimits{
		Apps: 50, CustomDomains: 50, ConcurrentDeploys: 5, UploadBytes: 1 << 30,
		DatabaseBytes: 10 << 30, DatabaseConnections: 100, BuildMinutes: 45, MinScale: 1, Cpu: 2,
		LogRetentionDays: 30, ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40,
		CronJobs: 50, CronMinIntervalMinutes: 1, CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1 << 30,
		Members: 50, AuditRetentionDays: 365,
		Previews: 20, PreviewMaxTtlHours: 720, Drains: 10, MetricsRetentionDays: 30,
	}
	if got := usecase.LimitsMessage(flock.Limits); !proto.Equal(got, want) {
		t.Fatalf("LimitsMessage(flock):\n got  %v\n want %v", got, want)
	}
}
