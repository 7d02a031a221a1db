package usecase

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
)

// collidingStore refuses the first n slugs it is offered, like a crowded slug space.
type collidingStore struct {
	Store
	refuse    int
	tried     []string
	acct      accounts.Account
	live      int64
	published []string
}

func (s *collidingStore) InTx(ctx context.Context, fn func(tx Tx) error) error { return fn(s) }

func (s *collidingStore) LockAccount(context.Context, string) (accounts.Account, error) {
	return s.acct, nil
}

func (s *collidingStore) CountLiveApps(context.Context, string) (int64, error) { return s.live, nil }

func (s *collidingStore) InsertApp(_ context.Context, a apps.App) error {
	s.tried = append(s.tried, a.Slug)
	if len(s.tried) <= s.refuse {
		return apps.ErrSlugTaken
	}
	return nil
}

func (s *collidingStore) Publish(_ context.Context, key string, _ proto.Message) error {
	s.published = append(s.published, key)
	return nil
}

type fixedAccounts struct{ a accounts.Account }

func (f fixedAccounts) Resolve(context.Context, string) (accounts.Account, error) { return f.a, nil }

func service(st Store, acct accounts.Account) *Apps {
	return &Apps{Store: st, Accounts: fixedAccounts{acct}, Zones: map[string]string{"eu": "z-eu", "us": "z-us"},
		NewID: func() string { return "id" }, Now: time.Now}
}

func TestGeneratedSlugRetriesOnCollision(t *testing.T) {
	acct := accounts.Account{ID: "a", Plan: &accounts.Plan{Name: "flock", Apps: 50}}
	st := &collidingStore{refuse: 3, acct: acct}
	a, err := service(st, acct).Create(context.Background(), "a", CreateRequest{})
	if err != nil || len(st.tried) != 4 || a.Slug != st.tried[3] {
		t.Fatalf("created %q after %v: %v", a.Slug, st.tried, err)
	}
	if len(st.published) != 1 || st.published[0] != "apps.app.created" {
		t.Fatalf("published %v, want one apps.app.created", st.published)
	}
	// A chosen name is not retried: its collision is the caller's 409.
	st = &collidingStore{refuse: 1, acct: acct}
	name := "mine"
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Name: &name}); !errors.Is(err, apps.ErrSlugTaken) || len(st.tried) != 1 {
		t.Fatalf("chosen name: %v after %v", err, st.tried)
	}
	// A crowded space gives up rather than looping for ever.
	st = &collidingStore{refuse: 1 << 30, acct: acct}
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{}); !errors.Is(err, apps.ErrSlugSpaceExhausted) || len(st.tried) != apps.MaxSlugAttempts {
		t.Fatalf("exhausted: %v after %d tries", err, len(st.tried))
	}
}

func TestLimitAndDefaults(t *testing.T) {
	acct := accounts.Account{ID: "a", DefaultRegion: "us", Plan: &accounts.Plan{Name: "nestling", Apps: 3}}
	st := &collidingStore{acct: acct, live: 2}
	a, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Kind: "service"})
	if err != nil || a.Region != "us" || a.Zone != "z-us" || a.Kind != "service" || a.Status != apps.StatusDeploying ||
		a.Framework != apps.FrameworkStatic || a.CurrentDeployID != nil || a.Name != a.Slug {
		t.Fatalf("app %+v: %v", a, err)
	}
	st.live = 3
	_, err = service(st, acct).Create(context.Background(), "a", CreateRequest{})
	var le *accounts.LimitError
	if !errors.Is(err, apps.ErrAppLimit) || !errors.As(err, &le) || le.Limit != 3 || le.Plan != "nestling" {
		t.Fatalf("at the limit: %v", err)
	}
	bad := "asia"
	if _, err := service(st, acct).Create(context.Background(), "a", CreateRequest{Region: &bad}); !errors.Is(err, apps.ErrInvalidRegion) {
		t.Fatalf("bad region: %v", err)
	}
}
