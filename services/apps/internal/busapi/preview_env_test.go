package busapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/busapi"
)

// A preview's snapshot (issue 40): the overrides set over the app's variables,
// TORI_PREVIEW=1, the database variables left out with without_database; a malformed
// override seals nothing; and the hosting zone opens it as any deploy's.
func TestPreviewSnapshotOverridesAndDropsTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := apptest.New(t, apptest.Options{})
	cfg := busConfig(t)
	conn := testinfra.DialBus(t, cfg, s.Log)
	testinfra.Background(t, "snapshot", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvSnapshot, busapi.EnvSnapshot(s.Services.Env))
	})
	testinfra.Background(t, "open", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueEnvOpen, busapi.EnvOpen(s.Services.Env))
	})
	apptest.WaitQueue(t, cfg, appsbus.QueueEnvSnapshot)
	apptest.WaitQueue(t, cfg, appsbus.QueueEnvOpen)
	acct := apptest.NewAccount()
	app := s.CreateApp(acct, map[string]any{"name": "prev-env", "kind": "service"})
	appID := app["id"].(string)
	for k, v := range map[string]string{"FEATURE_X": "off", "KEEP": "kept", "DATABASE_URL": "postgres://prod", "DATABASE_RESTORE_URL": "postgres://restore"} {
		s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/prev-env/env", map[string]any{"key": k, "value": v})
	}
	zone := testinfra.DialBusAs(t, cfg, bus.ZonePrincipal("local"), nil)
	snapshotAndOpen := func(req *appsv1.EnvSnapshotRequest) map[string]string {
		t.Helper()
		var snap appsv1.EnvSnapshotReply
		if err := conn.Request(ctx, appsbus.QueueEnvSnapshot, req, &snap); err != nil {
			t.Fatal(err)
		}
		s.Hosting.Host("local", appID, req.DeployId, req.DeployId)
		var r appsv1.EnvOpenReply
		open := &appsv1.EnvOpenRequest{AppId: appID, DeployId: req.DeployId, RevisionDeployId: req.DeployId, Sealed: snap.Sealed, KeyId: snap.KeyId}
		if err := zone.Request(ctx, appsbus.QueueEnvOpen, open, &r); err != nil {
			t.Fatal(err)
		}
		return r.Vars
	}
	for _, c := range []struct {
		name string
		req  *appsv1.EnvSnapshotRequest
		want map[string]string
	}{
		{"a deploy's, unchanged", &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: uuid.NewString()},
			map[string]string{"FEATURE_X": "off", "KEEP": "kept", "DATABASE_URL": "postgres://prod", "DATABASE_RESTORE_URL": "postgres://restore"}},
		{"a preview without the database", &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: uuid.NewString(), Preview: true, WithoutDatabase: true,
			Overrides: map[string]string{"FEATURE_X": "on", "NEW_ONE": "n"}},
			map[string]string{"FEATURE_X": "on", "KEEP": "kept", "NEW_ONE": "n", "TORI_PREVIEW": "1"}},
		{"a preview sharing the database", &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: uuid.NewString(), Preview: true},
			map[string]string{"FEATURE_X": "off", "KEEP": "kept", "DATABASE_URL": "postgres://prod", "DATABASE_RESTORE_URL": "postgres://restore", "TORI_PREVIEW": "1"}},
	} {
		got := snapshotAndOpen(c.req)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d variables, want %d", c.name, len(got), len(c.want))
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got[k], v)
			}
		}
	}
	for _, bad := range []map[string]string{{"lower": "x"}, {"OK": "nul\x00"}} {
		var snap appsv1.EnvSnapshotReply
		var re *bus.RemoteError
		err := conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: uuid.NewString(), Preview: true, Overrides: bad}, &snap)
		if !errors.As(err, &re) || re.Code != "bad_request" {
			t.Errorf("override %v: %v, want bad_request", bad, err)
		}
	}
}
