package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func newPreview(appID, id, name string, status preview.Status, created time.Time) *preview.Preview {
	return &preview.Preview{ID: id, Name: name, AppID: appID, AccountID: "acct", Status: status, DeployID: uuid.NewString(),
		Database: preview.DatabaseNone, TTLSeconds: 60, ExpiresAt: created.Add(time.Minute), CreatedAt: created, UpdatedAt: created}
}

// seed records an app and the given previews.
func seed(t *testing.T, s *store.Store, ps ...*preview.Preview) string {
	t.Helper()
	appID := uuid.NewString()
	err := s.InTx(context.Background(), func(tx usecase.Tx) error {
		if err := tx.SaveApp(context.Background(), usecase.App{ID: appID, AccountID: "acct", Slug: "s-" + appID[:8], Kind: "service", Zone: "local"}, t0); err != nil {
			return err
		}
		for _, p := range ps {
			p.AppID = appID
			ok, err := tx.InsertPreview(context.Background(), p)
			if err != nil {
				return err
			}
			if !ok {
				t.Fatalf("preview %s not inserted", p.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return appID
}

// A preview is found by id first, then by the name a preview holds now, then by the newest
// that held it; a name is held by one preview still there at a time.
func TestPreviewByRefAndTheOneNameIndex(t *testing.T) {
	ctx := context.Background()
	s := store.New(storetest.NewPool(t))
	old := newPreview("", "old001", "pr", preview.Expired, t0)
	older := newPreview("", "old000", "pr", preview.Deleted, t0.Add(-time.Hour))
	cur := newPreview("", "cur001", "pr", preview.Ready, t0.Add(time.Minute))
	// A preview named like another's id: the id still wins.
	named := newPreview("", "nam001", "cur001", preview.Deploying, t0.Add(2*time.Minute))
	gone := newPreview("", "gon001", "gone", preview.Expired, t0)
	goneNewer := newPreview("", "gon002", "gone", preview.Deleted, t0.Add(time.Hour))
	appID := seed(t, s, old, older, cur, named, gone, goneNewer)
	for ref, want := range map[string]string{"pr": "cur001", "cur001": "cur001", "old001": "old001", "gone": "gon002", "nam001": "nam001"} {
		p, err := s.PreviewByRef(ctx, appID, ref)
		if err != nil || p.ID != want {
			t.Errorf("ref %q: %v, %v; want %s", ref, p, err, want)
		}
	}
	if _, err := s.PreviewByRef(ctx, appID, "nope"); !errors.Is(err, preview.ErrNotFound) {
		t.Errorf("unknown ref: %v", err)
	}
	if _, err := s.PreviewByRef(ctx, uuid.NewString(), "cur001"); !errors.Is(err, preview.ErrNotFound) {
		t.Errorf("another app's preview: %v", err)
	}
	// A second preview holding "pr" while one is there is refused (ON CONFLICT: not inserted);
	// an id taken is refused the same way.
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		for _, p := range []*preview.Preview{newPreview(appID, "dup001", "pr", preview.Deploying, t0), newPreview(appID, "cur001", "other", preview.Deploying, t0)} {
			ok, err := tx.InsertPreview(ctx, p)
			if err != nil || ok {
				t.Errorf("insert %s/%s: %v, %v; want refused", p.ID, p.Name, ok, err)
			}
		}
		n, err := tx.CountPreviews(ctx, appID)
		if err != nil || n != 2 {
			t.Errorf("counted %d (%v), want 2 (deploying and ready)", n, err)
		}
		active, err := tx.ActivePreviewByName(ctx, appID, "gone")
		if err != nil || active != nil {
			t.Errorf("active preview named gone: %v %v", active, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.Previews(ctx, appID)
	if err != nil || len(list) != 4 || list[0].ID != "nam001" {
		t.Fatalf("list (deleted left out, newest first): %v %v", list, err)
	}
}

// Two sweeps at once take disjoint due previews: SKIP LOCKED, so one replica expires each.
func TestDuePreviewsSkipLockedRows(t *testing.T) {
	ctx := context.Background()
	s := store.New(storetest.NewPool(t))
	due := newPreview("", "due001", "a", preview.Ready, t0)
	later := newPreview("", "lat001", "b", preview.Ready, t0)
	later.ExpiresAt = t0.Add(time.Hour)
	gone := newPreview("", "gon001", "c", preview.Expired, t0)
	seed(t, s, due, later, gone)
	now := t0.Add(2 * time.Minute)
	locked := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(ctx, func(tx usecase.Tx) error {
			ps, err := tx.DuePreviews(ctx, now, 10)
			if err != nil {
				return err
			}
			if len(ps) != 1 || ps[0].ID != "due001" {
				t.Errorf("first sweep: %v", ps)
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		ps, err := tx.DuePreviews(ctx, now, 10)
		if err == nil && len(ps) != 0 {
			t.Errorf("second sweep took locked rows: %v", ps)
		}
		return err
	})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A preview's revision is a deploy row the app's list leaves out; it may end previewing, and
// the plan's preview limits round-trip.
func TestPreviewRevisionsStayOutOfTheDeploysList(t *testing.T) {
	ctx := context.Background()
	s := store.New(storetest.NewPool(t))
	p := newPreview("", "rev001", "a", preview.Deploying, t0)
	appID := seed(t, s, p)
	plain := &deploy.Deploy{ID: uuid.NewString(), AppID: appID, AccountID: "acct", Kind: deploy.KindImage, Status: deploy.Building,
		Image: "ghcr.io/a/b@sha256:x", CreatedAt: t0, UpdatedAt: t0}
	rev := *plain
	rev.ID, rev.PreviewID, rev.CreatedAt = p.DeployID, p.ID, t0.Add(time.Second)
	err := s.InTx(ctx, func(tx usecase.Tx) error {
		if err := tx.Insert(ctx, plain); err != nil {
			return err
		}
		if err := tx.Insert(ctx, &rev); err != nil {
			return err
		}
		rev.PreviewID = p.ID
		if err := rev.ServePreview(t0.Add(time.Minute)); err != nil {
			return err
		}
		if err := tx.Update(ctx, &rev); err != nil {
			return err
		}
		return tx.SavePlan(ctx, "acct", usecase.Plan{Name: "flock", ConcurrentDeploys: 1, Version: 3, Previews: 20, PreviewMaxTTLHours: 720})
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, appID, 10, "")
	if err != nil || len(list) != 1 || list[0].ID != plain.ID {
		t.Fatalf("list: %v %v", list, err)
	}
	got, err := s.Deploy(ctx, rev.ID)
	if err != nil || got.PreviewID != "rev001" || got.Status != deploy.Previewing || got.FinishedAt == nil {
		t.Fatalf("the preview's revision: %+v %v", got, err)
	}
	if n, err := s.CountOpen(ctx, "acct"); err != nil || n != 1 {
		t.Fatalf("open deploys: %d %v (a previewing revision is not under way)", n, err)
	}
	plan, ok, err := s.Plan(ctx, "acct")
	if err != nil || !ok || plan.Previews != 20 || plan.PreviewMaxTTLHours != 720 {
		t.Fatalf("plan: %+v %v %v", plan, ok, err)
	}
}
