package usecase

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// countingApps owns every slug for team "b" and counts the questions.
type countingApps struct{ asked map[string]int }

func (c *countingApps) LookupApp(_ context.Context, accountID, slug string) (App, bool, error) {
	c.asked[accountID]++
	if accountID != "b" {
		return App{}, false, nil
	}
	return App{ID: "app", AccountID: "b", Slug: slug, Kind: "service", Zone: "local"}, true, nil
}

// The gate's question and the use case's in one request are one question to the apps
// service; another request asks again (a deleted app must be 404 at once).
func TestOneAppsQuestionPerRequest(t *testing.T) {
	apps := &countingApps{asked: map[string]int{}}
	s := NewDatabases(nil, apps, nil, nil, time.Now, slog.New(slog.DiscardHandler))
	req := WithAppMemo(context.Background())
	if team, found, err := s.AppTeam(req, []string{"a", "b"}, "api"); err != nil || !found || team != "b" {
		t.Fatalf("AppTeam = %q %v %v", team, found, err)
	}
	if a, err := s.app(req, "b", "api"); err != nil || a.ID != "app" {
		t.Fatalf("app = %+v %v", a, err)
	}
	if apps.asked["a"] != 1 || apps.asked["b"] != 1 {
		t.Fatalf("asked %v, want each team once", apps.asked)
	}
	if _, err := s.app(WithAppMemo(context.Background()), "b", "api"); err != nil || apps.asked["b"] != 2 {
		t.Fatalf("a second request asked %v (%v)", apps.asked, err)
	}
}
