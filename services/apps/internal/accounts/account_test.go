package accounts

import (
	"context"
	"errors"
	"testing"
)

type memStore struct{ acct map[string]Account }

func (m *memStore) Account(_ context.Context, id string) (Account, error) {
	if a, ok := m.acct[id]; ok {
		return a, nil
	}
	return Account{ID: id}, nil
}

func (m *memStore) SavePlan(_ context.Context, id string, p Plan) error {
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

func (s *source) AccountPlan(context.Context, string) (Plan, error) {
	s.asked++
	return Plan{Name: "nestling", Apps: 3}, s.err
}

func TestResolveAsksBillingOnlyWithoutACopy(t *testing.T) {
	st := &memStore{acct: map[string]Account{"known": {ID: "known", DefaultRegion: "us", Plan: &Plan{Name: "flock", Apps: 50, Version: 4}}}}
	src := &source{}
	r := Resolver{Store: st, Source: src}
	if a, err := r.Resolve(context.Background(), "known"); err != nil || a.Plan.Name != "flock" || a.Region() != "us" || src.asked != 0 {
		t.Fatalf("known account: %+v %v asked=%d", a, err, src.asked)
	}
	a, err := r.Resolve(context.Background(), "new")
	if err != nil || a.Plan.Name != "nestling" || a.Region() != DefaultRegion || src.asked != 1 {
		t.Fatalf("new account: %+v %v asked=%d", a, err, src.asked)
	}
	r.Resolve(context.Background(), "new")
	if src.asked != 1 {
		t.Fatalf("billing asked again for a stored answer")
	}
	src.err = errors.New("down")
	if _, err := r.Resolve(context.Background(), "other"); !errors.Is(err, ErrPlanUnavailable) {
		t.Fatalf("billing down: %v", err)
	}
}
