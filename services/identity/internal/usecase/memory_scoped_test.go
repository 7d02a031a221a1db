package usecase_test

import (
	"context"
	"time"

	"tori.dev/contract/access"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	"tori.dev/services/identity/internal/audit"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// The memory store knows no teams: its people are members of nothing, and its audit log
// keeps nothing. Teams, scoped tokens and the log are tested on Postgres
// (internal/httpapi, internal/store).

func (t tx) MemberTeam(context.Context, string, string) (access.Membership, error) {
	return access.Membership{}, auth.ErrNotFound
}
func (t tx) MemberRole(context.Context, string, string) (access.Membership, error) {
	return access.Membership{}, auth.ErrNotFound
}
func (t tx) TeamAppsAmong(context.Context, string, []string) ([]string, error) { return nil, nil }
func (t tx) APIToken(_ context.Context, id string) (auth.APIToken, error) {
	for _, tok := range t.m.tokens {
		if tok.ID == id {
			return tok, nil
		}
	}
	return auth.APIToken{}, auth.ErrNotFound
}
func (t tx) TeamTokens(context.Context, string) ([]usecase.TeamToken, error) { return nil, nil }
func (t tx) RevokeTeamToken(context.Context, string, string, time.Time) (auth.APIToken, error) {
	return auth.APIToken{}, auth.ErrNotFound
}
func (t tx) RecordAudit(context.Context, *auditv1.EntryRecorded) error { return nil }
func (t tx) AuditEntries(context.Context, audit.Query) ([]audit.Entry, error) {
	return []audit.Entry{}, nil
}
func (t tx) AuditRetentionDays(context.Context, string) (int, error) { return 0, nil }

func (m *memory) MemberTeam(ctx context.Context, userID, slug string) (ms access.Membership, err error) {
	err = m.inOne(func(t tx) error { ms, err = t.MemberTeam(ctx, userID, slug); return err })
	return ms, err
}
func (m *memory) MemberRole(ctx context.Context, teamID, userID string) (ms access.Membership, err error) {
	err = m.inOne(func(t tx) error { ms, err = t.MemberRole(ctx, teamID, userID); return err })
	return ms, err
}
func (m *memory) TeamAppsAmong(context.Context, string, []string) ([]string, error) { return nil, nil }
func (m *memory) APIToken(ctx context.Context, id string) (tok auth.APIToken, err error) {
	err = m.inOne(func(t tx) error { tok, err = t.APIToken(ctx, id); return err })
	return tok, err
}
func (m *memory) TeamTokens(context.Context, string) ([]usecase.TeamToken, error) { return nil, nil }
func (m *memory) RevokeTeamToken(context.Context, string, string, time.Time) (auth.APIToken, error) {
	return auth.APIToken{}, auth.ErrNotFound
}
func (m *memory) RecordAudit(context.Context, *auditv1.EntryRecorded) error { return nil }
func (m *memory) AuditEntries(context.Context, audit.Query) ([]audit.Entry, error) {
	return []audit.Entry{}, nil
}
func (m *memory) AuditRetentionDays(context.Context, string) (int, error) { return 0, nil }
func (m *memory) PruneAuditEntries(context.Context, time.Time, int) (int64, error) {
	return 0, nil
}
