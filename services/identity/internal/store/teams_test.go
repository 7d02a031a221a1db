package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/team"
	"tori.dev/services/identity/internal/usecase"

	"google.golang.org/protobuf/types/known/timestamppb"
)

// personTeam stores a person's account with its personal team, as a first sign-in does.
func personTeam(t *testing.T, s *store.Store, email, slug string) account.User {
	t.Helper()
	a, u := newAccount(t, s, email)
	ctx := context.Background()
	if ok, err := s.CreateTeam(ctx, team.NewPersonal(a.ID, u.Name, slug, t0)); err != nil || !ok {
		t.Fatalf("personal team: %v %v", ok, err)
	}
	if err := s.AddMember(ctx, a.ID, u.ID, access.Owner, t0); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTeamsAndMemberships(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	ada := personTeam(t, s, "ada@example.com", "ada")
	bob := personTeam(t, s, "bob@example.com", "bob")
	// A token scoped to a team (the scoped-token routes are another part's; removal must
	// revoke what they make).
	scopedToken := func(u account.User, teamID string) string {
		t.Helper()
		tok, _ := auth.NewAPIToken(u.AccountID, u.ID, "ci", t0)
		if err := s.CreateAPIToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		_, err := pool.Exec(ctx, `UPDATE api_tokens SET team_id = $2, scope = 'deploy', expires_at = $3 WHERE id = $1`,
			tok.ID, teamID, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID
	}

	// Slugs are global: a taken one is refused without failing the transaction.
	acme := team.New("Acme", "acme", ada.AccountID, t0.Add(time.Minute))
	err := s.InTx(ctx, func(tx usecase.Repo) error {
		if ok, err := tx.CreateTeam(ctx, team.New("Taken", "bob", ada.AccountID, t0)); err != nil || ok {
			t.Fatalf("a taken slug: %v %v", ok, err)
		}
		if ok, err := tx.CreateTeam(ctx, acme); err != nil || !ok {
			t.Fatalf("create: %v %v", ok, err)
		}
		if err := tx.AddMember(ctx, acme.ID, ada.ID, access.Owner, t0); err != nil {
			return err
		}
		return tx.AddMember(ctx, acme.ID, bob.ID, access.Viewer, t0.Add(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}

	ms, err := s.MembershipsOf(ctx, ada.ID)
	want := []access.Membership{{TeamID: ada.AccountID, Slug: "ada", Role: access.Owner, Personal: true}, {TeamID: acme.ID, Slug: "acme", Role: access.Owner}}
	if err != nil || len(ms) != 2 || ms[0] != want[0] || ms[1] != want[1] {
		t.Fatalf("memberships %+v %v", ms, err)
	}
	v, err := s.TeamOf(ctx, acme.ID, bob.ID)
	if err != nil || v.Role != access.Viewer || v.Plan != "nestling" || v.Name != "Acme" || v.Personal || !v.CreatedAt.Equal(acme.CreatedAt) {
		t.Fatalf("bob's view %+v %v", v, err)
	}
	if _, err := s.TeamOf(ctx, ada.AccountID, bob.ID); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("not a member: %v", err)
	}
	members, err := s.Members(ctx, acme.ID)
	if err != nil || len(members) != 2 || members[0].UserID != ada.ID || members[1].Email != "bob@example.com" ||
		members[1].AccountID != bob.AccountID || members[1].Role != access.Viewer {
		t.Fatalf("members %+v %v", members, err)
	}
	if n, err := s.CountOwners(ctx, acme.ID); err != nil || n != 1 {
		t.Fatalf("owners %d %v", n, err)
	}

	// Ada owns one free team; once billing moves it to songbird it no longer counts.
	if n, err := s.CountOwnedNestlingTeams(ctx, ada.ID); err != nil || n != 1 {
		t.Fatalf("owned nestling teams %d %v", n, err)
	}
	if _, err := s.SavePlan(ctx, acme.ID, account.Plan{Name: "songbird", Limits: account.Limits{Members: 10, AuditRetentionDays: 30}, Version: 1, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountOwnedNestlingTeams(ctx, ada.ID); n != 0 {
		t.Fatalf("a songbird team counted: %d", n)
	}
	if p, err := s.Plan(ctx, acme.ID); err != nil || p.Limits.Members != 10 || p.Limits.AuditRetentionDays != 30 {
		t.Fatalf("plan copy %+v %v", p, err)
	}
	if n, _ := s.CountOwnedNestlingTeams(ctx, bob.ID); n != 0 {
		t.Fatalf("a viewer owns nothing: %d", n)
	}

	if err := s.SetRole(ctx, acme.ID, bob.ID, access.Admin); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Member(ctx, acme.ID, bob.ID); err != nil || m.Role != access.Admin {
		t.Fatalf("member %+v %v", m, err)
	}
	if err := s.RenameTeam(ctx, acme.ID, "Acme Industries"); err != nil {
		t.Fatal(err)
	}

	// Team apps: recorded once, forgotten once.
	app := uuid.NewString()
	for range 2 {
		if err := s.PutTeamApp(ctx, app, acme.ID, "site"); err != nil {
			t.Fatal(err)
		}
	}
	if has, err := s.TeamHasApps(ctx, acme.ID); err != nil || !has {
		t.Fatalf("has apps %v %v", has, err)
	}
	for range 2 {
		if err := s.DeleteTeamApp(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if has, _ := s.TeamHasApps(ctx, acme.ID); has {
		t.Fatal("a deleted app still counts")
	}

	// Removing a member revokes their tokens of this team only.
	teamTok := scopedToken(bob, acme.ID)
	ownTok := scopedToken(bob, bob.AccountID)
	adaTok := scopedToken(ada, acme.ID)
	var revoked []usecase.RevokedToken
	err = s.InTx(ctx, func(tx usecase.Repo) error {
		if err := tx.RemoveMember(ctx, acme.ID, bob.ID); err != nil {
			return err
		}
		revoked, err = tx.RevokeMemberTokens(ctx, acme.ID, bob.ID, t0)
		return err
	})
	if err != nil || len(revoked) != 1 || revoked[0].ID != teamTok || revoked[0].AccountID != bob.AccountID {
		t.Fatalf("revoked %+v %v", revoked, err)
	}
	if _, err := s.Member(ctx, acme.ID, bob.ID); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("removed member: %v", err)
	}
	if err := s.RemoveMember(ctx, acme.ID, bob.ID); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("removed twice: %v", err)
	}
	if all, _ := s.RevokeTeamTokens(ctx, acme.ID, t0); len(all) != 1 || all[0].ID != adaTok {
		t.Fatalf("team tokens %+v", all)
	}
	if again, _ := s.RevokeTeamTokens(ctx, acme.ID, t0); len(again) != 0 {
		t.Fatalf("revoked twice: %+v", again)
	}
	var ownRevoked bool
	if err := pool.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM api_tokens WHERE id = $1`, ownTok).Scan(&ownRevoked); err != nil || ownRevoked {
		t.Fatalf("a token of another team was revoked: %v %v", ownRevoked, err)
	}

	// Deleting the team takes its memberships (and tokens) with it.
	if err := s.DeleteTeam(ctx, acme.ID); err != nil {
		t.Fatal(err)
	}
	if ms, _ := s.MembershipsOf(ctx, ada.ID); len(ms) != 1 {
		t.Fatalf("memberships after delete %+v", ms)
	}
	if _, err := s.Team(ctx, acme.ID); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("deleted team: %v", err)
	}
	if err := s.DeleteTeam(ctx, acme.ID); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("deleted twice: %v", err)
	}
}

func TestInvitationsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.New(t)
	ada := personTeam(t, s, "ada@example.com", "ada")
	acme := team.New("Acme", "acme", ada.AccountID, t0)
	if _, err := s.CreateTeam(ctx, acme); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	bob, bobCode := team.NewInvitation(acme.ID, "bob@example.com", access.Developer, ada.ID, t0)
	carol, _ := team.NewInvitation(acme.ID, "carol@example.com", access.Viewer, ada.ID, t0.Add(time.Second))
	old, _ := team.NewInvitation(acme.ID, "old@example.com", access.Viewer, ada.ID, t0.Add(-8*24*time.Hour))
	for _, i := range []team.Invitation{bob, carol, old} {
		if err := s.CreateInvitation(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.PendingInvitations(ctx, acme.ID, now)
	if err != nil || len(l) != 2 || l[0].ID != bob.ID || l[0].Role != access.Developer || l[0].InvitedBy != ada.ID || l[1].ID != carol.ID {
		t.Fatalf("pending %+v %v", l, err)
	}

	err = s.InTx(ctx, func(tx usecase.Repo) error {
		got, err := tx.LockInvitation(ctx, team.HashCode(bobCode))
		if err != nil {
			return err
		}
		if got.ID != bob.ID || got.Email != "bob@example.com" || !got.ExpiresAt.Equal(bob.ExpiresAt) {
			t.Fatalf("locked %+v", got)
		}
		if err := got.Accept("bob@example.com", now); err != nil {
			return err
		}
		return tx.SaveInvitation(ctx, got)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LockInvitation(ctx, team.HashCode(bobCode)); got.AcceptedAt == nil || !got.AcceptedAt.Equal(now) {
		t.Fatalf("accepted %+v", got)
	}
	if _, err := s.LockInvitation(ctx, team.HashCode("unknown")); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("unknown code: %v", err)
	}

	if err := s.RevokeInvitation(ctx, acme.ID, old.ID, now); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("an expired invitation is not pending: %v", err)
	}
	if err := s.RevokeInvitation(ctx, ada.AccountID, carol.ID, now); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("another team's invitation: %v", err)
	}
	if err := s.RevokeInvitationsTo(ctx, acme.ID, "carol@example.com", now); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.PendingInvitations(ctx, acme.ID, now); len(l) != 0 {
		t.Fatalf("pending after revoke %+v", l)
	}
}

// The gate's writer records an entry once, with the actor's email filled from identity's users.
func TestWriteAuditEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	ada := personTeam(t, s, "ada@example.com", "ada")
	e := &auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: ada.AccountID, At: timestamppb.New(t0), ActorType: "user",
		UserId: ada.ID, Action: "member.update", Target: "teams/ada/members/x", Ip: "192.0.2.1", Outcome: "denied",
		Metadata: map[string]string{"role": "owner"}}
	for range 2 {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.WriteAuditEntry(ctx, tx, e); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	var email, role, tokenID string
	err := pool.QueryRow(ctx, `SELECT count(*), min(email), min(metadata->>'role'), coalesce(min(token_id::text), '')
		FROM audit_entries WHERE team_id = $1`, ada.AccountID).Scan(&n, &email, &role, &tokenID)
	if err != nil || n != 1 || email != "ada@example.com" || role != "owner" || tokenID != "" {
		t.Fatalf("entries %d %q %q %q %v", n, email, role, tokenID, err)
	}
	// Outside a transaction the repo refuses: an entry commits with its change or not at all.
	if err := s.RecordAudit(ctx, e); err == nil {
		t.Fatal("RecordAudit outside a transaction")
	}
}
