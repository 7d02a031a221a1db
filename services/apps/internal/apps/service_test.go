package apps

import (
	"context"
	"errors"
	"testing"
	"time"

	"tori.dev/services/apps/internal/accounts"
)

// collidingStore refuses the first n slugs it is offered, like a crowded slug space.
type collidingStore struct {
	Store
	refuse int
	tried  []string
	acct   accounts.Account
	live   int64
}

func (s *collidingStore) CreateApp(_ context.Context, _ string, build BuildFunc) (App, error) {
	a, err := build(s.acct, s.live)
	if err != nil {
		return App{}, err
	}
	s.tried = append(s.tried, a.Slug)
	if len(s.tried) <= s.refuse {
		return App{}, ErrSlugTaken
	}
	return a, nil
}

type fixedAccounts struct{ a accounts.Account }

func (f fixedAccounts) Resolve(context.Context, string) (accounts.Account, error) { return f.a, nil }

func service(st Store, acct accounts.Account) *Service {
	return &Service{Store: st, Accounts: fixedAccounts{acct}, Zones: map[string]string{"eu": "z-eu", "us": "z-us"},
		NewID: func() string { return "id" }, Now: time.Now}
}

func TestGeneratedSlugRetriesOnCollision(t *testing.T) {
	acct := accounts.Account{ID: "a", Plan: &accounts.Plan{Name: "flock", Apps: 50}}
	st := &collidingStore{refuse: 3, acct: acct}
	a, err := service(st, acct).Create(context.Background(), "a", CreateRequest{})
	if err != nil || len(st.tried) != 4 || a.Slug != st.tried[3] {
		t.Fatalf("created %q after %v: %v", a.Slug, st.tried, err)
	}
	// A chosen name is not retried: its collision is the caller's 409.
	st = &collidingStore{refuse: 1, acct: acct}
	name := "mine"
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Name: &name}); !errors.Is(err, ErrSlugTaken) || len(st.tried) != 1 {
		t.Fatalf("chosen name: %v after %v", err, st.tried)
	}
	// A crowded space gives up rather than looping for ever.
	st = &collidingStore{refuse: 1 << 30, acct: acct}
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{}); !errors.Is(err, ErrSlugSpaceExhausted) || len(st.tried) != MaxSlugAttempts {
		t.Fatalf("exhausted: %v after %d tries", err, len(st.tried))
	}
}

func TestLimitAndDefaults(t *testing.T) {
	acct := accounts.Account{ID: "a", DefaultRegion: "us", Plan: &accounts.Plan{Name: "nestling", Apps: 3}}
	st := &collidingStore{acct: acct, live: 2}
	a, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Kind: "service"})
	if err != nil || a.Region != "us" || a.Zone != "z-us" || a.Kind != "service" || a.Status != StatusDeploying ||
		a.Framework != FrameworkStatic || a.CurrentDeployID != nil || a.Name != a.Slug {
		t.Fatalf("app %+v: %v", a, err)
	}
	st.live = 3
	_, err = service(st, acct).Create(context.Background(), "a", CreateRequest{})
	var le *accounts.LimitError
	if !errors.Is(err, ErrAppLimit) || !errors.As(err, &le) || le.Limit != 3 || le.Plan != "nestling" {
		t.Fatalf("at the limit: %v", err)
	}
	bad := "asia"
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Region: &bad}); !errors.Is(err, ErrInvalidRegion) {
		t.Fatalf("bad region: %v", err)
	}
}
