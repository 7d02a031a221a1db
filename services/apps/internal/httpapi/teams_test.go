package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
)

func slugsOf(t *testing.T, r apptest.Response) []string {
	t.Helper()
	var list []map[string]any
	r.JSON(t, &list)
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a["slug"].(string)+"@"+a["team"].(string))
	}
	return out
}

// An app belongs to the team its create named (the personal team by default): the app's
// JSON names the team, apps.app.created carries the team's id, and each team's plan limits
// its own apps.
func TestAppsBelongToTeams(t *testing.T) {
	t.Parallel()
	f := newTeamFixture(t)
	s, own := f.s, f.owner.AccountID
	ownSlug := "own-" + own[len(own)-6:]

	if a := s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"name": "mine"}).Map(t); a["team"] != ownSlug {
		t.Fatalf("a create naming no team: %v, want team %s", a, ownSlug)
	}
	if a := s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"name": "shared", "team": "acme"}).Map(t); a["team"] != "acme" {
		t.Fatalf("a create naming acme: %v", a)
	}
	if a := s.DoAs(f.owner, http.MethodPost, "/api/apps?team=acme", map[string]any{"name": "by-query"}).Map(t); a["team"] != "acme" {
		t.Fatalf("a create naming acme in the query: %v", a)
	}
	ev := created(t, s)
	if len(ev) != 3 || ev[0].AccountId != own || ev[1].AccountId != f.team || ev[2].AccountId != f.team {
		t.Fatalf("apps.app.created carries the owning team's id: %v", ev)
	}

	// A team the caller is not in is 404, as one that does not exist; a team that is not a
	// slug, or two teams named at once, is 400.
	for _, c := range []struct {
		who  *callerid.Caller
		path string
		body any
		want int
	}{
		{f.stranger, "/api/apps", map[string]any{"team": "acme"}, http.StatusNotFound},
		{f.owner, "/api/apps", map[string]any{"team": "no-such-team"}, http.StatusNotFound},
		{f.owner, "/api/apps?team=no-such-team", nil, http.StatusNotFound},
		{f.owner, "/api/apps", map[string]any{"team": 7}, http.StatusBadRequest},
		{f.owner, "/api/apps?team=acme", map[string]any{"team": ownSlug}, http.StatusBadRequest},
	} {
		r := s.DoAs(c.who, http.MethodPost, c.path, c.body)
		if r.Status != c.want {
			t.Errorf("POST %s %v: %d %s, want %d", c.path, c.body, r.Status, r.Body, c.want)
		}
		if c.want == http.StatusBadRequest && r.Map(t)["field"] != "team" {
			t.Errorf("POST %s %v: %s names no field team", c.path, c.body, r.Body)
		}
	}
	if n := len(created(t, s)); n != 3 {
		t.Fatalf("refused creates made apps: %d", n)
	}

	// The list spans every team of the caller; ?team= narrows it; a stranger sees none.
	all := slugsOf(t, s.DoAs(f.owner, http.MethodGet, "/api/apps", nil))
	if want := []string{"mine@" + ownSlug, "shared@acme", "by-query@acme"}; !slices.Equal(all, want) {
		t.Fatalf("owner's list %v, want %v", all, want)
	}
	if got := slugsOf(t, s.DoAs(f.owner, http.MethodGet, "/api/apps?team=acme", nil)); !slices.Equal(got, []string{"shared@acme", "by-query@acme"}) {
		t.Fatalf("?team=acme: %v", got)
	}
	if got := slugsOf(t, s.DoAs(f.owner, http.MethodGet, "/api/apps?team="+ownSlug, nil)); !slices.Equal(got, []string{"mine@" + ownSlug}) {
		t.Fatalf("?team=%s: %v", ownSlug, got)
	}
	if got := slugsOf(t, s.DoAs(f.viewer, http.MethodGet, "/api/apps", nil)); !slices.Equal(got, []string{"shared@acme", "by-query@acme"}) {
		t.Fatalf("viewer's list: %v", got)
	}
	if got := slugsOf(t, s.DoAs(f.stranger, http.MethodGet, "/api/apps", nil)); len(got) != 0 {
		t.Fatalf("a stranger sees %v", got)
	}
	if r := s.DoAs(f.stranger, http.MethodGet, "/api/apps?team=acme", nil); r.Status != http.StatusNotFound {
		t.Fatalf("a stranger's ?team=acme: %d %s", r.Status, r.Body)
	}
	if r := s.DoAs(f.stranger, http.MethodGet, "/api/apps/shared", nil); r.Status != http.StatusNotFound {
		t.Fatalf("a stranger reads acme's app: %d %s", r.Status, r.Body)
	}

	// A viewer reads the app, and its environment masked as everyone does.
	if a := s.DoAs(f.viewer, http.MethodGet, "/api/apps/shared", nil).Map(t); a["team"] != "acme" {
		t.Fatalf("viewer reads %v", a)
	}
	s.Must(http.StatusCreated, own, http.MethodPut, "/api/apps/mine/env", map[string]any{"key": "K", "value": "long-secret-value"})
	if r := s.DoAs(f.owner, http.MethodPut, "/api/apps/shared/env", map[string]any{"key": "K", "value": "long-secret-value"}); r.Status != http.StatusCreated {
		t.Fatalf("owner sets env: %d %s", r.Status, r.Body)
	}
	var vars []map[string]string
	s.DoAs(f.viewer, http.MethodGet, "/api/apps/shared/env", nil).JSON(t, &vars)
	if len(vars) != 1 || vars[0]["value"] == "long-secret-value" {
		t.Fatalf("viewer reads env %v, want it masked", vars)
	}

	// A token pinned to one app lists and reads only it, and creates nothing.
	pinned := &callerid.Caller{
		AccountID: own, UserID: f.owner.UserID, TokenKind: callerid.KindAPI, TokenID: "token-pinned",
		Teams: callerid.EncodeTeams([]access.Membership{{TeamID: f.team, Slug: "acme", Role: access.Owner}}), Scope: "deploy", Apps: "shared",
	}
	if got := slugsOf(t, s.DoAs(pinned, http.MethodGet, "/api/apps", nil)); !slices.Equal(got, []string{"shared@acme"}) {
		t.Fatalf("pinned token's list: %v", got)
	}
	if r := s.DoAs(pinned, http.MethodGet, "/api/apps/by-query", nil); r.Status != http.StatusNotFound {
		t.Fatalf("pinned token reads another app: %d %s", r.Status, r.Body)
	}
	if r := s.DoAs(pinned, http.MethodPost, "/api/apps", map[string]any{"name": "pinned-made"}); r.Status != http.StatusForbidden || r.Map(t)["code"] != "insufficient_scope" {
		t.Fatalf("pinned token creates: %d %s", r.Status, r.Body)
	}

	// Limits are each team's own: the personal team on nestling is full at 3 apps while
	// acme, on songbird, still takes more.
	for _, name := range []string{"mine-2", "mine-3"} {
		s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"name": name})
	}
	if r := s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"name": "mine-4"}); r.Status != http.StatusForbidden || r.Map(t)["code"] != "app_limit_reached" {
		t.Fatalf("a fourth personal app: %d %s", r.Status, r.Body)
	}
	if r := s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"name": "shared-3", "team": "acme"}); r.Status != http.StatusCreated {
		t.Fatalf("a third acme app: %d %s", r.Status, r.Body)
	}
}

// created reads the apps.app.created events of the outbox.
func created(t *testing.T, s *apptest.Service) []*appsv1.AppCreated {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = 'apps.app.created' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var out []*appsv1.AppCreated
	for _, b := range bodies {
		m := &appsv1.AppCreated{}
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
