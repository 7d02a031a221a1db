package usecase_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

var (
	startRevision = zonebus.CommandKey("local", zonebus.CommandDeploy)
	activate      = zonebus.CommandKey("local", zonebus.CommandActivate)
	discard       = zonebus.CommandKey("local", zonebus.CommandDiscard)
	created       = deploysbus.KeyDeployCreated
	changed       = deploysbus.KeyDeployStatusChanged
	wentLive      = deploysbus.KeyDeployLive
)

// img is an image of acme/web on ghcr.io pinned to a digest of 64 times c.
func img(c string) string { return "ghcr.io/acme/web@sha256:" + strings.Repeat(c, 64) }

// An image deploy is refused for what it names (a static app, another's or no app, an image
// without a registry), for the account (a hold from day 7, the plan's concurrent deploys
// under way), and answered with the live deploy when nothing changed; a refusal writes and
// says nothing.
func TestCreateImage(t *testing.T) {
	ref := img("1")
	for _, tc := range []struct {
		name    string
		setup   func(*world)
		account string
		slug    string
		in      usecase.ImageInput
		wantErr error
		// wantLive: the answer is the live deploy, nothing created.
		wantLive bool
	}{
		{name: "a service app", slug: "web", in: usecase.ImageInput{Image: ref}},
		{name: "a static app", slug: "site", in: usecase.ImageInput{Image: ref}, wantErr: deploy.ErrKindMismatch},
		{name: "no such app", slug: "nope", in: usecase.ImageInput{Image: ref}, wantErr: deploy.ErrAppNotFound},
		{name: "another account's app", account: "stranger", slug: "web", in: usecase.ImageInput{Image: ref}, wantErr: deploy.ErrAppNotFound},
		{name: "an image without a registry", slug: "web", in: usecase.ImageInput{Image: "web@sha256:" + strings.Repeat("1", 64)}, wantErr: deploy.ErrInvalidImage},
		{name: "day 7 of a hold", setup: (*world).holdFromDay7, slug: "web", in: usecase.ImageInput{Image: ref}, wantErr: deploy.ErrBillingHold},
		{name: "the plan's concurrent deploys under way", slug: "web", in: usecase.ImageInput{Image: ref}, wantErr: deploy.ErrDeployLimit,
			setup: func(w *world) { w.image(img("a")); w.image(img("b")) }},
		{name: "one under way, one more allowed", slug: "web", in: usecase.ImageInput{Image: ref},
			setup: func(w *world) { w.image(img("a")) }},
		{name: "the live image and environment again", slug: "web", in: usecase.ImageInput{Image: ref}, wantLive: true,
			setup: func(w *world) { w.live(w.image(ref).ID) }},
		{name: "the same with forceRestart", slug: "web", in: usecase.ImageInput{Image: ref, ForceRestart: true},
			setup: func(w *world) { w.live(w.image(ref).ID) }},
		{name: "the live image with another environment", slug: "web", in: usecase.ImageInput{Image: ref},
			setup: func(w *world) { w.live(w.image(ref).ID); w.env.vars = "A=2" }},
		{name: "another image", slug: "web", in: usecase.ImageInput{Image: img("2")},
			setup: func(w *world) { w.live(w.image(ref).ID) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			if tc.account == "" {
				tc.account = account
			}
			w.m.keys()
			before := len(w.m.deploys)
			d, isNew, err := w.svc.CreateImage(context.Background(), tc.account, tc.slug, tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if len(w.m.deploys) != before || len(w.m.keys()) != 0 {
					t.Fatal("a refused deploy left a row or an event behind")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantLive {
				if isNew || d.Status != deploy.Live || len(w.m.deploys) != before || len(w.m.keys()) != 0 {
					t.Fatalf("got %s (new: %v), %d deploys; want the live one and nothing new", d.Status, isNew, len(w.m.deploys))
				}
				return
			}
			if !isNew || d.Status != deploy.Building || d.Image != tc.in.Image || d.Env.For != d.ID {
				t.Fatalf("got %+v (new: %v), want a building deploy of %s with its own snapshot", d, isNew, tc.in.Image)
			}
			if got := w.m.keys(); !slices.Equal(got, []string{created, startRevision}) {
				t.Fatalf("published %v, want created and the zone's start", got)
			}
		})
	}
}

// A rollback is a new deploy with the target's image, release command and snapshot, of a
// deploy that was once live only; a hold does not refuse it, the plan's concurrent deploys do.
func TestRollback(t *testing.T) {
	for _, tc := range []struct {
		name string
		// target returns the deploy to roll back to, after whatever history it needs.
		target  func(*world) *deploy.Deploy
		account string
		wantErr error
	}{
		{name: "a superseded deploy", target: func(w *world) *deploy.Deploy {
			old := w.image(img("1"))
			w.live(old.ID)
			w.live(w.image(img("2")).ID)
			return old
		}},
		{name: "the live deploy", target: func(w *world) *deploy.Deploy {
			d := w.image(img("1"))
			w.live(d.ID)
			return d
		}},
		{name: "under a hold", target: func(w *world) *deploy.Deploy {
			d := w.image(img("1"))
			w.live(d.ID)
			w.holdFromDay7()
			return d
		}},
		{name: "a deploy that failed", wantErr: deploy.ErrNotRollbackable, target: func(w *world) *deploy.Deploy {
			d := w.image(img("1"))
			w.report(d.ID, zonev1.DeployStep_DEPLOY_STEP_FAILED)
			return d
		}},
		{name: "a deploy still building", wantErr: deploy.ErrNotRollbackable, target: func(w *world) *deploy.Deploy {
			return w.image(img("1"))
		}},
		{name: "another account's deploy", account: "stranger", wantErr: deploy.ErrAppNotFound, target: func(w *world) *deploy.Deploy {
			d := w.image(img("1"))
			w.live(d.ID)
			return d
		}},
		{name: "the plan's concurrent deploys under way", wantErr: deploy.ErrDeployLimit, target: func(w *world) *deploy.Deploy {
			d := w.image(img("1"))
			w.live(d.ID)
			w.image(img("2"))
			w.image(img("3"))
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			target := tc.target(w)
			if tc.account == "" {
				tc.account = account
			}
			w.m.keys()
			d, err := w.svc.Rollback(context.Background(), tc.account, "web", target.ID)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if len(w.m.keys()) != 0 {
					t.Fatal("a refused rollback published")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.ID == target.ID || d.RollbackOf != target.ID || d.Status != deploy.Building || d.Image != target.Image ||
				string(d.Env.Sealed) != string(target.Env.Sealed) {
				t.Fatalf("rollback %+v of %+v", d, target)
			}
			if got := w.m.keys(); !slices.Equal(got, []string{created, startRevision}) {
				t.Fatalf("published %v, want created and the zone's start", got)
			}
		})
	}
}

// A customer cancels a building or releasing deploy, and its zone is told to discard it; once
// traffic is being switched to it, or once it is live or ended, it is not theirs to cancel.
func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []zonev1.DeployStep
		account string
		wantErr error
	}{
		{name: "building"},
		{name: "releasing", steps: []zonev1.DeployStep{zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED}},
		{name: "being switched to", steps: []zonev1.DeployStep{zonev1.DeployStep_DEPLOY_STEP_READY}, wantErr: deploy.ErrNotCancellable},
		{name: "live", steps: []zonev1.DeployStep{zonev1.DeployStep_DEPLOY_STEP_READY, zonev1.DeployStep_DEPLOY_STEP_ACTIVATED}, wantErr: deploy.ErrNotCancellable},
		{name: "failed", steps: []zonev1.DeployStep{zonev1.DeployStep_DEPLOY_STEP_FAILED}, wantErr: deploy.ErrNotCancellable},
		{name: "another account's", account: "stranger", wantErr: deploy.ErrAppNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			d := w.image(img("1"))
			for _, step := range tc.steps {
				w.report(d.ID, step)
			}
			before := w.m.status(d.ID)
			if tc.account == "" {
				tc.account = account
			}
			w.m.keys()
			got, err := w.svc.Cancel(context.Background(), tc.account, "web", d.ID)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if w.m.status(d.ID) != before || len(w.m.keys()) != 0 {
					t.Fatalf("a refused cancel moved %s to %s or published", before, w.m.status(d.ID))
				}
				return
			}
			if err != nil || got.Status != deploy.Cancelled || w.m.status(d.ID) != deploy.Cancelled {
				t.Fatalf("got %v, %v; want cancelled", got, err)
			}
			if keys := w.m.keys(); !slices.Equal(keys, []string{changed, discard}) {
				t.Fatalf("published %v, want the status change and the zone's discard", keys)
			}
		})
	}
}

// A zone's reports move a deploy through the state machine: ready asks the zone to switch
// traffic (the deploy stays releasing), activated puts it live and steps the old live one
// down; a report the machine refuses (late, repeated, from another zone) changes nothing and
// is no error, so the bus does not retry it.
func TestZoneReports(t *testing.T) {
	w := newWorld(t)
	first := w.image(img("1"))
	w.live(first.ID)
	second := w.image(img("2"))
	w.m.keys()

	for _, step := range []struct {
		zone string
		step zonev1.DeployStep
		want deploy.Status
		keys []string
	}{
		{"local", zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED, deploy.Releasing, []string{changed}},
		{"local", zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED, deploy.Releasing, nil},
		{"local", zonev1.DeployStep_DEPLOY_STEP_READY, deploy.Releasing, []string{activate}},
		{"local", zonev1.DeployStep_DEPLOY_STEP_READY, deploy.Releasing, nil},
		{"elsewhere", zonev1.DeployStep_DEPLOY_STEP_ACTIVATED, deploy.Releasing, nil},
		{"local", zonev1.DeployStep_DEPLOY_STEP_ACTIVATED, deploy.Live, []string{changed, changed, wentLive}},
		{"local", zonev1.DeployStep_DEPLOY_STEP_FAILED, deploy.Live, nil},
		{"local", zonev1.DeployStep_DEPLOY_STEP_ACTIVATED, deploy.Live, nil},
	} {
		err := w.m.InTx(context.Background(), func(tx usecase.Tx) error {
			return w.svc.OnProgress(context.Background(), tx, &zonev1.DeployProgress{DeployId: second.ID, Zone: step.zone, Step: step.step})
		})
		if err != nil {
			t.Fatalf("%s from %s: %v", step.step, step.zone, err)
		}
		if got := w.m.status(second.ID); got != step.want {
			t.Fatalf("%s from %s: %s, want %s", step.step, step.zone, got, step.want)
		}
		if got := w.m.keys(); !slices.Equal(got, step.keys) {
			t.Fatalf("%s from %s: published %v, want %v", step.step, step.zone, got, step.keys)
		}
	}
	if got := w.m.status(first.ID); got != deploy.Superseded {
		t.Fatalf("the old live deploy is %s, want superseded", got)
	}
}

// A deploy still open 20 minutes after insert fails with deadline_exceeded and its zone is
// told to discard it; a minute earlier, or a deploy already ended, is left alone.
func TestCloseOverdue(t *testing.T) {
	w := newWorld(t)
	open := w.image(img("1"))
	done := w.image(img("2"))
	w.live(done.ID)
	w.m.keys()

	w.now = open.CreatedAt.Add(deploy.Deadline - time.Minute)
	if n, err := w.svc.CloseOverdue(context.Background()); err != nil || n != 0 {
		t.Fatalf("before the deadline: closed %d (%v)", n, err)
	}
	w.now = open.CreatedAt.Add(deploy.Deadline)
	if n, err := w.svc.CloseOverdue(context.Background()); err != nil || n != 1 {
		t.Fatalf("at the deadline: closed %d (%v), want 1", n, err)
	}
	d := w.m.deploys[open.ID]
	if d.Status != deploy.Failed || d.Error != deploy.ErrCodeDeadline || w.m.status(done.ID) != deploy.Live {
		t.Fatalf("overdue %s (%s), the live one %s", d.Status, d.Error, w.m.status(done.ID))
	}
	if got := w.m.keys(); !slices.Equal(got, []string{changed, discard}) {
		t.Fatalf("published %v, want the status change and the zone's discard", got)
	}
}
