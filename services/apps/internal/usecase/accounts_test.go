package usecase

import (
	"context"
	"errors"
	"testing"

	"tori.dev/services/apps/internal/accounts"
)

// memStore is the account copy in memory; the rest of Tx is not used.
type memStore struct {
	Tx
	acct map[string]accounts.Account
}

func (m *memStore) Account(_ context.Context, id string) (accounts.Account, error) {
	if a, ok := m.acct[id]; ok {
		return a, nil
	}
	return accounts.Account{ID: id}, nil
}

func (m *memStore) SavePlan(_ context.Context, id string, p accounts.Plan) error {
	a, _ := m.Account(context.Background(), id)
	if a.Plan == nil || a.Plan.Version < p.Version {
		a.Plan = &p
	}
	m.acct[id] = a
	return nil
}

type source struct {
	asked int
	err   error
}

func (s *source) AccountPlan(context.Context, string) (accounts.Plan, error) {
	s.asked++
	return accounts.Plan{Name: "nestling", Apps: 3}, s.err
}

func TestResolveAsksBillingOnlyWithoutACopy(t *testing.T) {
	st := &memStore{acct: map[string]accounts.Account{"known": {ID: "known", DefaultRegion: "us", Plan: &accounts.Plan{Name: "flock", Apps: 50, Version: 4}}}}
	src := &source{}
	r := Accounts{Store: st, Source: src}
	if a, err := r.Resolve(context.Background(), "known"); err != nil || a.Plan.Name != "flock" || a.Region() != "us" || src.asked != 0 {
		t.Fatalf("known account: %+v %v asked=%d", a, err, src.asked)
	}
	a, err := r.Resolve(context.Background(), "new")
	if err != nil || a.Plan.Name != "nestling" || a.Region() != accounts.DefaultRegion || src.asked != 1 {
		t.Fatalf("new account: %+v %v asked=%d", a, err, src.asked)
	}
	r.Resolve(context.Background(), "new")
	if src.asked != 1 {
		t.Fatalf("billing asked again for a stored answer")
	}
	src.err = errors.New("down")
	if _, err := r.Resolve(context.Background(), "other"); !errors.Is(err, accounts.ErrPlanUnavailable) {
		t.Fatalf("billing down: %v", err)
	}
}
