package usecase

import (
	"context"
	"sync"
)

// The apps service is asked about an app on every request (a deleted app is 404 here the
// moment it says so). Within one request the gate asks first, to find the app's team, and the
// use case asks again: a request's memo makes that one question.

type memoKey struct{}

type memoEntry struct {
	app   App
	found bool
}

type appMemo struct {
	mu sync.Mutex
	m  map[[2]string]memoEntry
}

// WithAppMemo returns ctx carrying a memo of the apps service's answers for one request.
func WithAppMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &appMemo{m: map[[2]string]memoEntry{}})
}

// lookup asks the apps service for teamID's live app named slug, once per request.
func (s *Databases) lookup(ctx context.Context, teamID, slug string) (App, bool, error) {
	memo, _ := ctx.Value(memoKey{}).(*appMemo)
	k := [2]string{teamID, slug}
	if memo != nil {
		memo.mu.Lock()
		e, ok := memo.m[k]
		memo.mu.Unlock()
		if ok {
			return e.app, e.found, nil
		}
	}
	a, found, err := s.apps.LookupApp(ctx, teamID, slug)
	if err != nil {
		return App{}, false, err // an unavailable answer is asked again
	}
	if memo != nil {
		memo.mu.Lock()
		memo.m[k] = memoEntry{app: a, found: found}
		memo.mu.Unlock()
	}
	return a, found, nil
}

// AppTeam finds which of teamIDs (the caller's teams) owns the live app named slug. The apps
// service answers an app only to the team owning it (an app's account id is its team's id),
// so a team the caller is not in is never asked, and found is false for anyone else's app.
func (s *Databases) AppTeam(ctx context.Context, teamIDs []string, slug string) (teamID string, found bool, err error) {
	for _, id := range teamIDs {
		a, ok, err := s.lookup(ctx, id, slug)
		if err != nil {
			return "", false, err
		}
		if ok && a.AccountID == id {
			return id, true, nil
		}
	}
	return "", false, nil
}
