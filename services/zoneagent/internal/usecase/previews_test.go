package usecase_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// startPreview records a static revision of the app's preview, as StartRevision with a
// preview_id does.
func (z *zone) startPreview(appID, slug, previewID, key string) string {
	id := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.StartRevision(ctx, tx, revision.Revision{DeployID: id, AppID: appID, Slug: slug, Kind: revision.KindStatic, ArtifactKey: key, PreviewID: previewID})
	})
	return id
}

func (z *zone) status(host string) int {
	z.t.Helper()
	status, _ := z.get(host, "/")
	return status
}

// A static preview is prepared as any revision of its app, but activating it points only the
// preview's host at it: the app's host keeps serving its live revision and its route is
// untouched. A newer revision of the preview replaces it in place (the old bundle goes);
// RemovePreview makes the host answer 410 at once and drops the bundle; a restarted agent
// still answers 410 (the tombstone is on record), and a late revision of the removed
// preview is discarded, never served.
func TestStaticPreviewServesBesideTheLiveRevision(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	live := z.start(appID, "shop", z.putSite(appID, map[string]string{"index.html": "live"}))
	z.waitState(live, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.ActivateRevision(ctx, tx, appID, live, revision.Formation{})
	})
	z.waitServes("shop.apps.test", "live")

	previewID := names.NewPreviewID()
	host := names.PreviewHost("shop", previewID, "preview.apps.test")
	v1 := z.startPreview(appID, "shop", previewID, z.putSite(appID, map[string]string{"index.html": "preview one"}))
	z.waitState(v1, revision.StateReady)
	if z.status(host) != 404 {
		t.Fatalf("a preview ready but not activated is served")
	}
	z.command(func(ctx context.Context, tx usecase.Tx) error { return z.agent.ActivatePreview(ctx, tx, v1, previewID) })
	z.waitState(v1, revision.StateActive)
	z.waitServes(host, "preview one")
	if _, body := z.get("shop.apps.test", "/"); body != "live" {
		t.Fatalf("the app's host serves %q after a preview went up", body)
	}
	routes, err := z.st.Routes(context.Background())
	if err != nil || len(routes) != 1 || routes[0].DeployID != live {
		t.Fatalf("the app's live route changed: %+v %v", routes, err)
	}

	v2 := z.startPreview(appID, "shop", previewID, z.putSite(appID, map[string]string{"index.html": "preview two"}))
	z.waitState(v2, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return z.agent.ActivatePreview(ctx, tx, v2, previewID) })
	z.waitServes(host, "preview two")
	z.waitState(v1, revision.StateRetired)
	testinfra.Eventually(t, 10*time.Second, "the replaced preview revision's bundle removed", func() bool {
		return z.objects("sites/"+appID+"/"+v1+"/") == 0
	})

	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.RemovePreview(ctx, tx, appID, previewID, "deleted")
	})
	if status, body := z.get(host, "/"); status != 410 || body != "gone: this preview was removed\n" {
		t.Fatalf("a removed preview answers %d %q, want 410", status, body)
	}
	z.waitState(v2, revision.StateRetired)
	if n := z.objects("sites/" + appID + "/" + v2 + "/"); n != 0 {
		t.Fatalf("the removed preview's bundle keeps %d objects", n)
	}
	z.waitServes("shop.apps.test", "live")

	// A revision of the removed preview arriving late is discarded, not served.
	late := z.startPreview(appID, "shop", previewID, z.putSite(appID, map[string]string{"index.html": "late"}))
	z.waitState(late, revision.StateDiscarded)

	// A second agent on the same records: the tombstone answers 410 again.
	z.stop()
	table := edge.NewTable()
	again, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: z.st, Artifacts: artifactsFrom(t, z.st, z.objDir), Sites: z.sites, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, again)
	srv := httptest.NewServer(&edge.Edge{Domain: "apps.test", PreviewsDomain: "preview.apps.test", Sites: z.cache(), Table: table})
	defer srv.Close()
	z.edge = srv
	z.waitServes("shop.apps.test", "live")
	if status := z.status(host); status != 410 {
		t.Fatalf("after a restart the removed preview answers %d, want 410", status)
	}
}

// Deleting the app removes its previews too: their hosts answer 410.
func TestAppDeletionRemovesItsPreviews(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	previewID := names.NewPreviewID()
	host := names.PreviewHost("gone", previewID, "preview.apps.test")
	d := z.startPreview(appID, "gone", previewID, z.putSite(appID, map[string]string{"index.html": "preview"}))
	z.waitState(d, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return z.agent.ActivatePreview(ctx, tx, d, previewID) })
	z.waitServes(host, "preview")
	z.command(func(ctx context.Context, tx usecase.Tx) error { return z.agent.DeleteApp(ctx, tx, appID, time.Now()) })
	if status := z.status(host); status != 410 {
		t.Fatalf("a deleted app's preview answers %d, want 410", status)
	}
	testinfra.Eventually(t, 10*time.Second, "the deleted app's preview bundle removed", func() bool {
		return z.objects("sites/"+appID+"/") == 0
	})
	time.Sleep(1500 * time.Millisecond) // a few passes reload the table
	if status := z.status(host); status != 410 {
		t.Fatalf("after reloads a deleted app's preview answers %d, want 410", status)
	}
}

// A promote (StartRevision.built_from_deploy_id naming the preview's revision) reuses the
// preview's bundle: it goes live with the preview's files although its own artifact is not
// there to fetch. A built-from revision the zone does not hold is no reuse: the revision is
// published from its artifact.
func TestPromoteReusesThePreviewsBundle(t *testing.T) {
	z := newZone(t)
	appID := uuid.NewString()
	previewID := names.NewPreviewID()
	pv := z.startPreview(appID, "promo", previewID, z.putSite(appID, map[string]string{"index.html": "from the preview"}))
	z.waitState(pv, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error { return z.agent.ActivatePreview(ctx, tx, pv, previewID) })
	z.waitServes(names.PreviewHost("promo", previewID, "preview.apps.test"), "from the preview")

	promoted := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.StartRevision(ctx, tx, revision.Revision{DeployID: promoted, AppID: appID, Slug: "promo", Kind: revision.KindStatic,
			ArtifactKey: "artifacts/" + appID + "/missing.tar", BuiltFromDeployID: pv})
	})
	z.waitState(promoted, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.ActivateRevision(ctx, tx, appID, promoted, revision.Formation{})
	})
	z.waitServes("promo.apps.test", "from the preview")

	fresh := uuid.Must(uuid.NewV7()).String()
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.StartRevision(ctx, tx, revision.Revision{DeployID: fresh, AppID: appID, Slug: "promo", Kind: revision.KindStatic,
			ArtifactKey: z.putSite(appID, map[string]string{"index.html": "rebuilt"}), BuiltFromDeployID: uuid.Must(uuid.NewV7()).String()})
	})
	z.waitState(fresh, revision.StateReady)
	z.command(func(ctx context.Context, tx usecase.Tx) error {
		return z.agent.ActivateRevision(ctx, tx, appID, fresh, revision.Formation{})
	})
	z.waitServes("promo.apps.test", "rebuilt")
}
