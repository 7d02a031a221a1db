package store_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
)

// The house of issue 41, in identity: 2,000 accounts, each with its user, personal team, plan,
// two API tokens and a session, and identity's copy of 10,000 apps. A gateway that has no
// token in its cache asks identity (introspection): every statement of that answer is an
// index probe, whatever the number of accounts, tokens and apps.
func TestIntrospectionStatementsUseIndexesAtScale(t *testing.T) {
	ctx := context.Background()
	adminURL := storetest.NewDatabase(t)
	url, err := pgstore.ServiceURL(adminURL, store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	rec := &testinfra.QueryRecorder{}
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	plain := testinfra.OpenServicePool(t, adminURL, store.Service(""))
	for _, sql := range []string{
		`INSERT INTO accounts (id, default_region, created_at, updated_at)
		 SELECT ('00000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid, 'eu', now(), now() FROM generate_series(1, 2000) i`,
		`INSERT INTO users (id, account_id, email, name, created_at) SELECT id, id, id || '@example.com', 'u', now() FROM accounts`,
		`INSERT INTO teams (id, slug, name, personal, owner_account_id, created_at) SELECT id, 'team-' || id, 't', true, id, now() FROM accounts`,
		`INSERT INTO memberships (team_id, user_id, role, created_at) SELECT id, id, 'owner', now() FROM accounts`,
		`INSERT INTO api_tokens (id, token_hash, account_id, user_id, name, prefix, created_at)
		 SELECT gen_random_uuid(), sha256((a.id::text || n)::bytea), a.id, a.id, 'ci', 'tori_', now() FROM accounts a, generate_series(1, 2) n`,
		`INSERT INTO sessions (id, token_hash, account_id, user_id, created_at, expires_at)
		 SELECT gen_random_uuid(), sha256((a.id::text || 's')::bytea), a.id, a.id, now(), now() + interval '1 day' FROM accounts a`,
		`INSERT INTO team_apps (app_id, team_id, slug) SELECT gen_random_uuid(), a.id, 'app-' || a.id || '-' || n FROM accounts a, generate_series(1, 5) n`,
		`INSERT INTO account_plans (account_id, plan, max_custom_domains, database_connections, database_bytes, version, updated_at)
		 SELECT id, 'pro', 10, 10, 1000000, 1, now() FROM accounts`,
		`ANALYZE`,
	} {
		if _, err := plain.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	st := store.New(traced)
	const user = "00000000-0000-0000-0000-000000000777"
	tokenHash := sha256.Sum256([]byte(user + "1"))
	sessionHash := sha256.Sum256([]byte(user + "s"))
	steps := []struct {
		name string
		run  func() error
	}{
		{"token", func() error {
			tok, err := st.APITokenByHash(ctx, tokenHash[:])
			if err != nil {
				return err
			}
			return st.TouchAPIToken(ctx, tok.ID, time.Now())
		}},
		{"session", func() error { _, err := st.SessionByHash(ctx, sessionHash[:]); return err }},
		{"memberships", func() error { _, err := st.MembershipsOf(ctx, user); return err }},
		{"member role", func() error { _, err := st.MemberRole(ctx, user, user); return err }},
		{"pinned apps", func() error { _, err := st.TeamAppsAmong(ctx, user, []string{"app-" + user + "-1"}); return err }},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		stmts := rec.Take()
		if len(stmts) == 0 {
			t.Fatalf("%s ran no statement", step.name)
		}
		for _, s := range stmts {
			rows, err := plain.Query(ctx, "EXPLAIN "+s.SQL, s.Args...)
			if err != nil {
				t.Fatalf("explain %s: %v", s.SQL, err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			p := strings.Join(lines, "\n")
			t.Logf("%s: %s\n%s", step.name, strings.Join(strings.Fields(s.SQL), " "), p)
			if strings.Contains(p, "Seq Scan") {
				t.Errorf("%s scans a whole table:\n%s\n%s", step.name, s.SQL, p)
			}
		}
	}
}
