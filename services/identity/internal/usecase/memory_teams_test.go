package usecase_test

import (
	"context"
	"time"

	"tori.dev/contract/access"
	"tori.dev/services/identity/internal/team"
	"tori.dev/services/identity/internal/usecase"
)

// teamsNotKept is the part of the Repo the in-memory store mostly leaves out: teams are
// tested against Postgres (store and httpapi tests). A call to a method not below panics on
// the nil interface, which shows at once. Memory keeps the teams a sign-in creates and their
// memberships, which introspection reads back.
type teamsNotKept struct {
	usecase.TeamRepo
	teams       map[string]team.Team
	memberships []access.Membership
	memberUsers []string // memberUsers[i] is the user of memberships[i]
}

func (t tx) CreateTeam(_ context.Context, tm team.Team) (bool, error) {
	if t.m.teams == nil {
		t.m.teams = map[string]team.Team{}
	}
	t.m.teams[tm.ID] = tm
	return true, nil
}

func (t tx) AddMember(_ context.Context, teamID, userID string, role access.Role, _ time.Time) error {
	tm := t.m.teams[teamID]
	t.m.memberships = append(t.m.memberships, access.Membership{TeamID: teamID, Slug: tm.Slug, Role: role, Personal: tm.Personal})
	t.m.memberUsers = append(t.m.memberUsers, userID)
	return nil
}

func (m *memory) MembershipsOf(_ context.Context, userID string) ([]access.Membership, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []access.Membership
	for i, u := range m.memberUsers {
		if u == userID {
			out = append(out, m.memberships[i])
		}
	}
	return out, nil
}

func (m *memory) OwnerEmails(_ context.Context, teamID string) ([]string, error) {
	var out []string
	for i, ms := range m.memberships {
		if ms.TeamID != teamID || ms.Role != access.Owner {
			continue
		}
		for _, u := range m.users {
			if u.ID == m.memberUsers[i] {
				out = append(out, u.Email)
			}
		}
	}
	return out, nil
}

func (t tx) OwnerEmails(ctx context.Context, teamID string) ([]string, error) {
	return t.m.OwnerEmails(ctx, teamID)
}
