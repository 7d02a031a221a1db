package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// From day 30 of an account's hold its artifacts are marked eligible for reclamation, and
// nothing else's; the mark goes with the hold. Nothing is deleted.
func TestArtifactsOfAHeldAccountAreMarkedReclaimableFromDay30(t *testing.T) {
	e := newEnv(t, testPlan)
	ctx := context.Background()
	e.addApp(e.account, "site", "static")
	mine := e.deployStatic("site", "a")
	e.goLive(mine)
	someoneElse := uuid.NewString()
	e.addApp(someoneElse, "theirs", "static")
	status, body, _ := e.upload(someoneElse, "theirs", file("index.html", "b"))
	if status != http.StatusCreated {
		t.Fatalf("deploy: %d %v", status, body)
	}
	theirs := body["id"].(string)

	marked := func(id string) bool {
		var since *time.Time
		if err := e.pool.QueryRow(ctx, `SELECT reclaimable_since FROM deploys WHERE id = $1`, id).Scan(&since); err != nil {
			t.Fatal(err)
		}
		return since != nil
	}
	hold := func(version int64, active bool, since time.Time) {
		h := deploy.Hold{Active: active, Version: version}
		if active {
			h.Since, h.DeploysRefusedFrom, h.ServingStopsFrom, h.ReclaimableFrom = since, since.Add(7*24*time.Hour), since.Add(14*24*time.Hour), since.Add(30*24*time.Hour)
		}
		if err := e.svc.Store().InTx(ctx, func(tx usecase.Tx) error { return e.svc.SaveHold(ctx, tx, e.account, h) }); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.MarkReclaimable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now := e.clock.Now()
	hold(1, true, now.Add(-29*24*time.Hour)) // day 29
	if marked(mine) {
		t.Fatal("marked before day 30")
	}
	hold(2, true, now.Add(-31*24*time.Hour)) // day 31
	if !marked(mine) || marked(theirs) {
		t.Fatalf("day 31: mine marked %v, another account's %v", marked(mine), marked(theirs))
	}
	if e.status(mine) != "live" || len(e.files()) == 0 {
		t.Fatal("marking changed the deploy or its files")
	}
	hold(3, false, time.Time{}) // paid
	if marked(mine) {
		t.Fatal("the mark outlived the hold")
	}
}
