package usecase_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

// appsOwner plays the apps service: it knows some apps and counts the questions.
type appsOwner struct {
	apps  map[string]logs.App // account/slug → app
	err   error
	asked int
}

func (o *appsOwner) LookupApp(_ context.Context, accountID, slug string) (logs.App, time.Time, bool, error) {
	o.asked++
	if o.err != nil {
		return logs.App{}, time.Time{}, false, o.err
	}
	a, ok := o.apps[accountID+"/"+slug]
	return a, time.Now(), ok, nil
}

// An app the copy has not heard of is asked for once, kept, and then found from the copy;
// the created event arriving afterwards changes nothing, and its delete still wins.
func TestAppFinderAsksTheOwnerOnceAndKeepsTheAnswer(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	fresh := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "fresh"}
	owner := &appsOwner{apps: map[string]logs.App{"acc/fresh": fresh}}
	f := usecase.NewAppFinder(db.Store, owner, slog.New(slog.DiscardHandler))

	for range 3 {
		got, err := f.Target(ctx, "acc", "fresh")
		if id := got.AppID; err != nil || id != fresh.ID {
			t.Fatalf("Target = %q, %v", id, err)
		}
	}
	if owner.asked != 1 {
		t.Fatalf("the owner was asked %d times, want once", owner.asked)
	}
	// The created event, late: the same write, harmless.
	db.SaveApp(t, fresh)
	if got, err := f.Target(ctx, "acc", "fresh"); err != nil || got.AppID != fresh.ID {
		t.Fatalf("after the late event: %q, %v", got.AppID, err)
	}
	db.MarkAppDeleted(t, fresh, time.Now())
	if _, err := f.Target(ctx, "acc", "fresh"); !errors.Is(err, logs.ErrNotFound) {
		t.Fatalf("deleted app: %v", err)
	}
	if owner.asked != 2 {
		t.Fatalf("a miss on a deleted app asks the owner again (who says no): asked %d", owner.asked)
	}
}

func TestAppFinderAnswers(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	raced := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "raced"}
	// The delete was consumed before the lookup's answer is kept: it stays deleted.
	db.MarkAppDeleted(t, raced, time.Now())
	for _, tc := range []struct {
		name    string
		owner   *appsOwner
		account string
		want    error
		asked   int
	}{
		{"nobody has it", &appsOwner{}, "acc", logs.ErrNotFound, 1},
		{"no caller", &appsOwner{}, "", logs.ErrNotFound, 0},
		{"apps unreachable", &appsOwner{err: logs.ErrAppUnavailable}, "acc", logs.ErrAppUnavailable, 1},
		{"deleted meanwhile", &appsOwner{apps: map[string]logs.App{"acc/raced": raced}}, "acc", logs.ErrNotFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := usecase.NewAppFinder(db.Store, tc.owner, slog.New(slog.DiscardHandler))
			_, err := f.Target(ctx, tc.account, "raced")
			if !errors.Is(err, tc.want) || tc.owner.asked != tc.asked {
				t.Fatalf("Target: %v after %d questions; want %v after %d", err, tc.owner.asked, tc.want, tc.asked)
			}
			if tc.want == logs.ErrAppUnavailable && errors.Is(err, logs.ErrNotFound) {
				t.Fatal("an unanswered lookup must not read as not found")
			}
		})
	}
}

// The store's target carries the account's plan copy, 0 without one, and follows its changes.
func TestTargetCarriesThePlanCopy(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	web := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
	db.SaveApp(t, web)
	if got, err := db.Store.Target(ctx, "acc", "web"); err != nil || got.AppID != web.ID || got.RetentionDays != 0 {
		t.Fatalf("without a copy: %+v, %v", got, err)
	}
	db.SavePlan(t, "acc", 7)
	if got, err := db.Store.Target(ctx, "acc", "web"); err != nil || got.AppID != web.ID || got.RetentionDays != 7 {
		t.Fatalf("with a copy of 7 days: %+v, %v", got, err)
	}
	db.SavePlanVersion(t, logs.Plan{AccountID: "acc", Name: "flock", RetentionDays: 30, Version: 99})
	if got, _ := db.Store.Target(ctx, "acc", "web"); got.RetentionDays != 30 {
		t.Fatalf("after a plan change: %+v", got)
	}
	if _, err := db.Store.Target(ctx, "other", "web"); !errors.Is(err, logs.ErrNotFound) {
		t.Fatalf("another account's slug: %v", err)
	}
}

// The gate's lookup finds an app's team in the copy, and for an app the copy lacks asks the
// owner on behalf of each of the caller's teams until one has it, keeping the answer.
func TestAppTeamAsksForTheCallersTeams(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	team := uuid.NewString()
	fresh := logs.App{ID: uuid.NewString(), AccountID: team, Slug: "fresh"}
	owner := &appsOwner{apps: map[string]logs.App{team + "/fresh": fresh}}
	f := usecase.NewAppFinder(db.Store, owner, slog.New(slog.DiscardHandler))

	if _, found, err := f.AppTeam(ctx, []string{"personal"}, "fresh"); found || err != nil || owner.asked != 1 {
		t.Fatalf("a caller outside the team: found %v, %v after %d questions", found, err, owner.asked)
	}
	got, found, err := f.AppTeam(ctx, []string{"personal", team}, "fresh")
	if got != team || !found || err != nil || owner.asked != 3 {
		t.Fatalf("a member: %q %v %v after %d questions", got, found, err, owner.asked)
	}
	if got, found, _ := f.AppTeam(ctx, nil, "fresh"); got != team || !found || owner.asked != 3 {
		t.Fatalf("from the copy: %q %v after %d questions", got, found, owner.asked)
	}
	db.MarkAppDeleted(t, fresh, time.Now())
	owner.apps = nil
	if _, found, _ := f.AppTeam(ctx, []string{team}, "fresh"); found {
		t.Fatal("a deleted app was found")
	}
	owner.err = logs.ErrAppUnavailable
	if _, _, err := f.AppTeam(ctx, []string{team}, "fresh"); !errors.Is(err, logs.ErrAppUnavailable) {
		t.Fatalf("apps unreachable: %v", err)
	}
}
