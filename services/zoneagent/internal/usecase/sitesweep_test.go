package usecase_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/usecase"
)

// The sweep reclaims the objects a removal left behind (a retired revision's, a revision the
// zone has no record of) and keeps those of revisions that serve or may still serve.
func TestSiteSweepReclaimsWhatNothingServes(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	retired := z.start(appID, "swept", z.putSite(appID, map[string]string{"index.html": "v1"}))
	z.waitState(retired, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, retired, true) })
	z.waitState(retired, revision.StateActive)
	live := z.start(appID, "swept", z.putSite(appID, map[string]string{"index.html": "v2"}))
	z.waitState(live, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return tx.Want(ctx, live, true) })
	z.waitState(live, revision.StateActive)
	ready := z.start(appID, "swept", z.putSite(appID, map[string]string{"index.html": "v3"}))
	z.waitState(ready, revision.StateReady)

	// What a removal that failed (the store out of reach) would have left behind.
	leftover := t.TempDir()
	os.WriteFile(filepath.Join(leftover, "index.html"), []byte("left"), 0o644)
	unknown := uuid.Must(uuid.NewV7()).String()
	for _, d := range []string{retired, unknown} {
		if err := z.sites.Publish(context.Background(), appID, d, leftover); err != nil {
			t.Fatal(err)
		}
	}
	n, err := z.agent.SiteSweepJob().Run(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("swept %d objects: %v, want the two leftovers' files", n, err)
	}
	for d, want := range map[string]int{retired: 0, unknown: 0, live: 2, ready: 2} {
		if got := z.objects("sites/" + appID + "/" + d + "/"); got != want {
			t.Errorf("%s: %d objects, want %d", d, got, want)
		}
	}
	z.waitServes("swept.apps.test", "v2")
}
