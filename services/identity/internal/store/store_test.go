package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/usecase"
)

var t0 = time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)

func newAccount(t *testing.T, s *store.Store, email string) (account.Account, account.User) {
	t.Helper()
	a, u := account.New(email, t0)
	if err := s.CreateAccount(context.Background(), a, u); err != nil {
		t.Fatal(err)
	}
	return a, u
}

// Times come back in the local zone; they must be the same instants.
func sameAccount(x, y account.Account) bool {
	return x.ID == y.ID && x.DefaultRegion == y.DefaultRegion && x.CreatedAt.Equal(y.CreatedAt) && x.UpdatedAt.Equal(y.UpdatedAt)
}

func sameUser(x, y account.User) bool {
	return x.ID == y.ID && x.AccountID == y.AccountID && x.Email == y.Email && x.Name == y.Name && x.CreatedAt.Equal(y.CreatedAt)
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.New(t)
	a, u := newAccount(t, s, "ada@example.com")

	gotA, gotU, err := s.Account(ctx, a.ID)
	if err != nil || !sameAccount(gotA, a) || !sameUser(gotU, u) {
		t.Fatalf("Account: %+v %+v %v", gotA, gotU, err)
	}
	if byEmail, err := s.UserByEmail(ctx, "ada@example.com"); err != nil || !sameUser(byEmail, u) {
		t.Fatalf("UserByEmail: %+v %v", byEmail, err)
	}
	if _, err := s.UserByEmail(ctx, "bob@example.com"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("unknown email: %v", err)
	}
	if _, _, err := s.Account(ctx, "0190f5e4-0000-7000-8000-000000000000"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
	a2, u2 := account.New("ada@example.com", t0)
	if err := s.CreateAccount(ctx, a2, u2); !pgstore.IsUniqueViolation(err, "users_email_key") {
		t.Fatalf("a second account for one address: %v", err)
	}

	err = s.InTx(ctx, func(tx usecase.Repo) error {
		locked, _, err := tx.LockAccount(ctx, a.ID)
		if err != nil {
			return err
		}
		locked.SetRegion(account.RegionUS, t0.Add(time.Hour))
		return tx.SaveAccount(ctx, locked)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Account(ctx, a.ID); got.DefaultRegion != account.RegionUS || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("region not saved: %+v", got)
	}
}

func TestPlanKeepsHighestVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.New(t)
	const acc = "0190f5e4-0000-7000-8000-000000000001"
	if _, err := s.Plan(ctx, acc); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("no copy yet: %v", err)
	}
	plan := func(name string, v int64) account.Plan {
		return account.Plan{Name: name, Limits: account.Limits{MaxCustomDomains: v, DatabaseConnections: 10 * v, DatabaseBytes: 100 * v}, Version: v, UpdatedAt: t0}
	}
	steps := []struct {
		p     account.Plan
		saved bool
		want  string
	}{
		{plan("songbird", 2), true, "songbird"},
		{plan("nestling", 1), false, "songbird"}, // late, older
		{plan("flock", 2), false, "songbird"},    // same version again
		{plan("flock", 3), true, "flock"},
	}
	for i, st := range steps {
		saved, err := s.SavePlan(ctx, acc, st.p)
		if err != nil || saved != st.saved {
			t.Fatalf("step %d: saved=%v err=%v, want %v", i, saved, err, st.saved)
		}
		got, err := s.Plan(ctx, acc)
		if err != nil || got.Name != st.want {
			t.Fatalf("step %d: plan %+v %v, want %s", i, got, err, st.want)
		}
	}
	got, _ := s.Plan(ctx, acc)
	if got.Limits != (account.Limits{MaxCustomDomains: 3, DatabaseConnections: 30, DatabaseBytes: 300}) {
		t.Fatalf("limits %+v", got.Limits)
	}
}

func TestSessionsAndTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.New(t)
	a, u := newAccount(t, s, "ada@example.com")
	b, _ := newAccount(t, s, "bob@example.com")

	sess, tok := auth.NewSession(a.ID, u.ID, t0)
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	got, err := s.SessionByHash(ctx, auth.Hash(tok))
	if err != nil || got.ID != sess.ID || !got.ExpiresAt.Equal(sess.ExpiresAt) {
		t.Fatalf("SessionByHash: %+v %v", got, err)
	}
	if _, err := s.SessionByHash(ctx, auth.Hash(tok+"x")); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if ok, _ := s.RevokeSession(ctx, b.ID, sess.ID, t0); ok {
		t.Fatal("another account revoked the session")
	}
	if ok, err := s.RevokeSession(ctx, a.ID, sess.ID, t0); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, _ := s.RevokeSession(ctx, a.ID, sess.ID, t0); ok {
		t.Fatal("revoked twice")
	}

	t1, sec1 := auth.NewAPIToken(a.ID, u.ID, "laptop", t0)
	t2, _ := auth.NewAPIToken(a.ID, u.ID, "ci", t0.Add(time.Second))
	for _, tk := range []auth.APIToken{t1, t2} {
		if err := s.CreateAPIToken(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.APITokenByHash(ctx, auth.Hash(sec1)); err != nil || got.ID != t1.ID || got.Prefix != sec1[:8] {
		t.Fatalf("APITokenByHash: %+v %v", got, err)
	}

	// Use is recorded at most once a minute.
	touches := []struct {
		at   time.Time
		want time.Time
	}{
		{t0.Add(time.Minute), t0.Add(time.Minute)},
		{t0.Add(90 * time.Second), t0.Add(time.Minute)},
		{t0.Add(2 * time.Minute), t0.Add(2 * time.Minute)},
	}
	for i, tc := range touches {
		if err := s.TouchAPIToken(ctx, t1.ID, tc.at); err != nil {
			t.Fatal(err)
		}
		got, _ := s.APITokenByHash(ctx, auth.Hash(sec1))
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(tc.want) {
			t.Fatalf("touch %d: lastUsedAt %v, want %v", i, got.LastUsedAt, tc.want)
		}
	}

	if err := s.RevokeAPIToken(ctx, b.ID, t1.ID, t0); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("another account revoked a token: %v", err)
	}
	if err := s.RevokeAPIToken(ctx, a.ID, t1.ID, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAPIToken(ctx, a.ID, t1.ID, t0); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("revoked twice: %v", err)
	}
	list, err := s.ListAPITokens(ctx, a.ID)
	if err != nil || len(list) != 1 || list[0].ID != t2.ID {
		t.Fatalf("list after revoke: %+v %v", list, err)
	}
	if list, _ := s.ListAPITokens(ctx, b.ID); len(list) != 0 {
		t.Fatalf("another account's list: %+v", list)
	}
}

func TestDeviceGrantRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.New(t)
	a, u := newAccount(t, s, "ada@example.com")

	g, deviceCode, userCode := auth.NewDeviceGrant("laptop", t0)
	if ok, err := s.CreateDeviceGrant(ctx, g); !ok || err != nil {
		t.Fatalf("create: %v %v", ok, err)
	}
	clash, _, _ := auth.NewDeviceGrant("other", t0)
	clash.UserHash = g.UserHash
	if ok, err := s.CreateDeviceGrant(ctx, clash); ok || err != nil {
		t.Fatalf("a clashing user code must be refused quietly: %v %v", ok, err)
	}

	err := s.InTx(ctx, func(tx usecase.Repo) error {
		got, err := tx.LockDeviceGrantByUserCode(ctx, auth.Hash(userCode))
		if err != nil {
			return err
		}
		if err := got.Approve(a.ID, u.ID, t0.Add(time.Second)); err != nil {
			return err
		}
		_ = got.Poll(t0.Add(2 * time.Second))
		got.Interval = 7 * time.Second // not the default, to see it kept
		got.Issue("0190f5e4-0000-7000-8000-0000000000aa")
		return tx.SaveDeviceGrant(ctx, got)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, func(tx usecase.Repo) error {
		got, err := tx.LockDeviceGrantByDeviceCode(ctx, auth.Hash(deviceCode))
		if err != nil {
			return err
		}
		if got.Status != auth.StatusIssued || got.AccountID != a.ID || got.UserID != u.ID ||
			got.Interval != 7*time.Second || got.LastPolledAt == nil || !got.LastPolledAt.Equal(t0.Add(2*time.Second)) ||
			got.TokenID != "0190f5e4-0000-7000-8000-0000000000aa" || got.ClientName != "laptop" {
			t.Errorf("grant after reload: %+v", got)
		}
		_, err = tx.LockDeviceGrantByDeviceCode(ctx, auth.Hash("nope"))
		if !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("unknown device code: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPublishOnlyInsideTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	ev := &identityv1.TokenRevoked{TokenId: "x"}
	if err := s.Publish(ctx, identitybus.KeyTokenRevoked, ev); err == nil {
		t.Fatal("publish outside a transaction must fail: the event would not commit with its change")
	}
	if err := s.InTx(ctx, func(tx usecase.Repo) error { return tx.Publish(ctx, identitybus.KeyTokenRevoked, ev) }); err != nil {
		t.Fatal(err)
	}
	// A rolled-back transaction leaves no event.
	boom := errors.New("boom")
	_ = s.InTx(ctx, func(tx usecase.Repo) error {
		_ = tx.Publish(ctx, identitybus.KeyAccountUpdated, &identityv1.AccountUpdated{})
		return boom
	})
	rows, _ := pool.Query(ctx, `SELECT routing_key FROM outbox`)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(keys) != 1 || keys[0] != identitybus.KeyTokenRevoked {
		t.Fatalf("outbox rows %v %v", keys, err)
	}
}

func TestDeleteEndedBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := storetest.New(t)
	a, u := newAccount(t, s, "ada@example.com")
	old, _ := auth.NewMagicLink("ada@example.com", t0.Add(-48*time.Hour))
	fresh, _ := auth.NewMagicLink("ada@example.com", t0)
	oldSess, _ := auth.NewSession(a.ID, u.ID, t0.Add(-40*24*time.Hour))
	liveSess, _ := auth.NewSession(a.ID, u.ID, t0)
	for _, m := range []auth.MagicLink{old, fresh} {
		if err := s.CreateMagicLink(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, ss := range []auth.Session{oldSess, liveSess} {
		if err := s.CreateSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteEndedBefore(ctx, t0.Add(-auth.EndedKept))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d rows (%v), want 2", n, err)
	}
	var links, sessions int
	_ = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM magic_links), (SELECT count(*) FROM sessions)`).Scan(&links, &sessions)
	if links != 1 || sessions != 1 {
		t.Fatalf("left %d links and %d sessions, want 1 and 1", links, sessions)
	}
}
