package app_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
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
	f := app.NewAppFinder(db.Store, owner, slog.New(slog.DiscardHandler))

	for range 3 {
		id, err := f.AppID(ctx, "acc", "fresh")
		if err != nil || id != fresh.ID {
			t.Fatalf("AppID = %q, %v", id, err)
		}
	}
	if owner.asked != 1 {
		t.Fatalf("the owner was asked %d times, want once", owner.asked)
	}
	// The created event, late: the same write, harmless.
	db.SaveApp(t, fresh)
	if id, err := f.AppID(ctx, "acc", "fresh"); err != nil || id != fresh.ID {
		t.Fatalf("after the late event: %q, %v", id, err)
	}
	db.MarkAppDeleted(t, fresh, time.Now())
	if _, err := f.AppID(ctx, "acc", "fresh"); !errors.Is(err, logs.ErrNotFound) {
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
			f := app.NewAppFinder(db.Store, tc.owner, slog.New(slog.DiscardHandler))
			_, err := f.AppID(ctx, tc.account, "raced")
			if !errors.Is(err, tc.want) || tc.owner.asked != tc.asked {
				t.Fatalf("AppID: %v after %d questions; want %v after %d", err, tc.owner.asked, tc.want, tc.asked)
			}
			if tc.want == logs.ErrAppUnavailable && errors.Is(err, logs.ErrNotFound) {
				t.Fatal("an unanswered lookup must not read as not found")
			}
		})
	}
}
