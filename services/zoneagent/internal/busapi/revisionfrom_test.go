package busapi

import (
	"testing"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
)

// A start command's process declarations and instance memory reach the revision as sent,
// a bad name among them (the preparation refuses it, invalid_artifact, and says why).
func TestRevisionFromCarriesProcesses(t *testing.T) {
	rev := revisionFrom(&zonev1.StartRevision{Kind: "image", InstanceMemoryBytes: 512 << 20, Processes: []*zonev1.ProcessType{
		{Name: "web", Command: "bin/s"}, {Name: "worker", Command: "bin/w"}, {Name: "Bad_Name", Command: "x"},
	}})
	want := []revision.Process{{Name: "web", Command: "bin/s"}, {Name: "worker", Command: "bin/w"}, {Name: "Bad_Name", Command: "x"}}
	if len(rev.Processes) != len(want) || rev.InstanceMemoryBytes != 512<<20 {
		t.Fatalf("got %+v", rev)
	}
	for i := range want {
		if rev.Processes[i] != want[i] {
			t.Fatalf("process %d: %+v, want %+v", i, rev.Processes[i], want[i])
		}
	}
	if revision.CheckProcesses(rev.Processes) == nil {
		t.Fatal("the bad name passed the check")
	}
	if none := revisionFrom(&zonev1.StartRevision{Kind: "source"}); none.Processes != nil {
		t.Fatalf("a source's start declared %v", none.Processes)
	}
}
