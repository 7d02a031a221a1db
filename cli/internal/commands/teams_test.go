package commands

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/cli/internal/api"
)

// teamAPI answers the team, member, invitation, token and audit routes as DESIGN39 and the
// OpenAPI document describe them, for ada (personal team "ada") who owns team "acme", and
// records each request.
type teamAPI struct {
	mu    sync.Mutex
	calls []string
}

const (
	teamsJSON = `[{"id":"u1","slug":"ada","name":"Ada","plan":"nestling","personal":true,"role":"owner","createdAt":"2026-11-01T00:00:00.000Z"},` +
		`{"id":"t2","slug":"acme","name":"Acme Inc","plan":"songbird","personal":false,"role":"admin","createdAt":"2026-11-02T00:00:00.000Z"}]`
	acmeJSON    = `{"id":"t2","slug":"acme","name":"Acme Inc","plan":"nestling","personal":false,"role":"owner","createdAt":"2026-11-02T00:00:00.000Z"}`
	membersJSON = `[{"userId":"u1","email":"ada@example.com","name":"Ada","role":"owner","joinedAt":"2026-11-02T00:00:00.000Z"},` +
		`{"userId":"u2","email":"bob@example.com","name":"","role":"developer","joinedAt":"2026-11-03T00:00:00.000Z"}]`
	invitationJSON = `{"id":"i1","email":"cy@example.com","role":"viewer","createdAt":"2026-11-04T00:00:00.000Z","expiresAt":"2026-11-11T00:00:00.000Z","invitedBy":"ada@example.com"}`
	auditEntry1    = `{"id":"e2","at":"2026-11-05T10:00:00.000Z","actor":{"type":"user","userId":"u2","email":"bob@example.com","tokenId":null},` +
		`"action":"app.delete","target":"apps/web","app":"web","ip":"203.0.113.9","outcome":"denied","metadata":{}}`
	auditEntry2 = `{"id":"e1","at":"2026-11-05T09:00:00.000Z","actor":{"type":"token","userId":"u1","email":"ada@example.com","tokenId":"tk1"},` +
		`"action":"env.set","target":"apps/web/env","app":"web","ip":"203.0.113.7","outcome":"success","metadata":{"keys":"A,B"}}`
	tokenCreatedJSON = `{"id":"tk9","name":"ci","prefix":"svc_abcd","token":"svc_abcdSECRET","team":"acme","scopes":["deploy"],"apps":["web"],` +
		`"expiresAt":"2027-02-03T00:00:00.000Z","createdAt":"2026-11-05T00:00:00.000Z"}`
)

func (a *teamAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	call := r.Method + " " + r.URL.RequestURI()
	if len(body) > 0 {
		call += " " + string(body)
	}
	a.calls = append(a.calls, call)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	refuse := func(status int, body string) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/teams":
		w.Write([]byte(teamsJSON))
	case "POST /api/teams":
		refuse(http.StatusCreated, acmeJSON)
	case "GET /api/teams/acme":
		w.Write([]byte(acmeJSON))
	case "PATCH /api/teams/acme":
		w.Write([]byte(strings.Replace(acmeJSON, "Acme Inc", "Acme GmbH", 1)))
	case "DELETE /api/teams/acme":
		refuse(http.StatusConflict, `{"error":"team_not_empty","code":"team_not_empty","message":"the team still owns 2 apps"}`)
	case "GET /api/teams/acme/members", "GET /api/teams/ada/members":
		w.Write([]byte(membersJSON))
	case "PATCH /api/teams/acme/members/u2":
		w.Write([]byte(strings.Replace(strings.TrimSuffix(strings.Split(membersJSON, "},")[1], "]"), `"developer"`, `"admin"`, 1)))
	case "DELETE /api/teams/acme/members/u2":
		w.WriteHeader(http.StatusNoContent)
	case "DELETE /api/teams/acme/members/u1":
		refuse(http.StatusConflict, `{"error":"last_owner","code":"last_owner","message":"a team keeps at least one owner"}`)
	case "GET /api/teams/acme/invitations":
		w.Write([]byte(`[` + invitationJSON + `]`))
	case "POST /api/teams/acme/invitations":
		refuse(http.StatusCreated, invitationJSON)
	case "POST /api/teams/full/invitations":
		refuse(http.StatusForbidden, `{"error":"member_limit_reached","code":"member_limit_reached","limit":3,"plan":"nestling","message":"nestling teams have at most 3 members, invitations included"}`)
	case "DELETE /api/teams/acme/invitations/i1":
		w.WriteHeader(http.StatusNoContent)
	case "POST /api/invitations/accept":
		if strings.Contains(string(body), "cli-token") {
			refuse(http.StatusForbidden, `{"error":"session_required","code":"session_required","message":"this needs a sign-in session"}`)
			return
		}
		w.Write([]byte(acmeJSON))
	case "GET /api/teams/acme/audit":
		if r.URL.Query().Get("cursor") == "" {
			w.Write([]byte(`{"entries":[` + auditEntry1 + `],"nextCursor":"c2"}`))
		} else {
			w.Write([]byte(`{"entries":[` + auditEntry2 + `],"nextCursor":null}`))
		}
	case "GET /api/teams/ada/audit":
		refuse(http.StatusGone, `{"error":"beyond_retention","code":"beyond_retention","message":"nestling keeps 7 days of audit log"}`)
	case "GET /api/teams/mine/audit":
		refuse(http.StatusForbidden, `{"error":"insufficient_role","code":"insufficient_role","requiredRole":"admin","message":"reading the audit log needs admin"}`)
	case "GET /api/teams/nope/members":
		refuse(http.StatusNotFound, `{"error":"not found","code":"not_found"}`)
	case "GET /api/teams/acme/tokens":
		w.Write([]byte(`[{"id":"tk1","name":"ci","prefix":"svc_abcd","scopes":["deploy"],"apps":["web"],"expiresAt":"2027-02-03T00:00:00.000Z",` +
			`"createdAt":"2026-11-05T00:00:00.000Z","lastUsedAt":null,"userId":"u1","email":"ada@example.com"}]`))
	case "DELETE /api/teams/acme/tokens/tk1":
		w.WriteHeader(http.StatusNoContent)
	case "GET /api/tokens":
		w.Write([]byte(`[{"id":"tk0","name":"laptop","prefix":"svc_0000","createdAt":"2026-11-01T00:00:00.000Z","lastUsedAt":null,"team":null,"scopes":null,"apps":null,"expiresAt":null},` +
			`{"id":"tk1","name":"ci","prefix":"svc_abcd","createdAt":"2026-11-05T00:00:00.000Z","lastUsedAt":"2026-11-06T00:00:00.000Z","team":"acme","scopes":["deploy"],"apps":["web"],"expiresAt":"2027-02-03T00:00:00.000Z"}]`))
	case "POST /api/tokens":
		if strings.Contains(string(body), `"admin"`) {
			refuse(http.StatusForbidden, `{"error":"insufficient_scope","code":"insufficient_scope","requiredScope":"admin","message":"a deploy token cannot make an admin token"}`)
			return
		}
		refuse(http.StatusCreated, tokenCreatedJSON)
	case "GET /api/apps":
		w.Write([]byte(`[{"id":"a1","slug":"web","name":"web","region":"eu","zone":"eu-1","status":"live","framework":"static","kind":"static","currentDeployId":null,"url":"https://web.apps.test","createdAt":"x","team":"acme"}]`))
	case "POST /api/apps":
		refuse(http.StatusCreated, `{"id":"a2","slug":"shop","name":"shop","region":"eu","zone":"eu-1","status":"idle","framework":"static","kind":"static","currentDeployId":null,"url":"https://shop.apps.test","createdAt":"x","team":"acme"}`)
	case "DELETE /api/apps/web":
		refuse(http.StatusForbidden, `{"error":"insufficient_role","code":"insufficient_role","requiredRole":"admin","message":"deleting an app needs admin"}`)
	case "GET /api/billing":
		w.Write([]byte(`{"plan":"songbird","subscription":null,"hold":null,"configured":true}`))
	default:
		refuse(http.StatusNotFound, `{"error":"not found"}`)
	}
}

func (a *teamAPI) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.calls
	a.calls = nil
	return c
}

func TestTeamsMembersAuditAndTokensAgainstTheAPI(t *testing.T) {
	fake := &teamAPI{}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		code  int
		calls []string
		out   []string // whole stdout, spaces squeezed; nil: not checked
		err   string   // in stderr
	}{
		{"teams alone lists", []string{"teams"}, nil, 0, []string{"GET /api/teams"}, []string{
			"SLUG NAME ROLE PLAN PERSONAL",
			"ada Ada owner nestling yes",
			"acme Acme Inc admin songbird no",
		}, ""},
		{"teams create", []string{"teams", "create", "Acme Inc", "--slug", "acme"}, nil, 0,
			[]string{`POST /api/teams {"name":"Acme Inc","slug":"acme"}`}, nil, ""},
		{"teams create with a bad slug sends nothing", []string{"teams", "create", "Acme", "--slug", "Acme!"}, nil, 2, nil, []string{""}, "--slug"},
		{"teams show", []string{"teams", "show", "acme"}, nil, 0, []string{"GET /api/teams/acme"}, nil, ""},
		{"teams rename on --team", []string{"teams", "rename", "Acme GmbH", "--team", "acme"}, nil, 0,
			[]string{`PATCH /api/teams/acme {"name":"Acme GmbH"}`}, []string{"Renamed team acme to Acme GmbH."}, ""},
		{"teams delete of a team with apps", []string{"teams", "delete", "acme", "--yes"}, nil, 1, []string{"DELETE /api/teams/acme"}, []string{""},
			"team_not_empty: the team still owns 2 apps (DELETE " + srv.URL + "/api/teams/acme)"},
		{"teams delete never guesses", []string{"teams", "delete", "--yes"}, nil, 2, nil, []string{""}, "which team?"},

		{"apps list --team", []string{"apps", "list", "--team", "acme"}, nil, 0, []string{"GET /api/apps?team=acme"}, []string{
			"SLUG TEAM KIND STATUS REGION URL",
			"web acme static live eu https://web.apps.test",
		}, ""},
		{"apps list from TORI_TEAM", []string{"apps"}, map[string]string{"TORI_TEAM": "acme"}, 0, []string{"GET /api/apps?team=acme"}, nil, ""},
		{"the flag wins over TORI_TEAM", []string{"apps", "--team", "ada"}, map[string]string{"TORI_TEAM": "acme"}, 0, []string{"GET /api/apps?team=ada"}, nil, ""},
		{"apps list of every team", []string{"apps"}, nil, 0, []string{"GET /api/apps"}, nil, ""},
		{"apps create in a team", []string{"apps", "create", "shop", "--team", "acme"}, nil, 0,
			[]string{`POST /api/apps {"name":"shop","kind":"static","team":"acme"}`}, []string{"Created static app shop in eu (team acme): https://shop.apps.test"}, ""},
		{"billing of a team", []string{"billing", "--team", "acme"}, nil, 0, []string{"GET /api/billing?team=acme"}, nil, ""},
		{"a developer deleting an app", []string{"apps", "delete", "web", "--yes"}, nil, 1, []string{"DELETE /api/apps/web"}, []string{""},
			`app "web": insufficient_role: deleting an app needs admin (DELETE ` + srv.URL + `/api/apps/web): this needs the admin role in the team`},

		{"members of the personal team by default", []string{"members"}, nil, 0, []string{"GET /api/teams", "GET /api/teams/ada/members"}, []string{
			"USER ID EMAIL NAME ROLE JOINED",
			"u1 ada@example.com Ada owner 2026-11-02T00:00:00.000Z",
			"u2 bob@example.com - developer 2026-11-03T00:00:00.000Z",
		}, ""},
		{"members of an unknown team", []string{"members", "--team", "nope"}, nil, 1, []string{"GET /api/teams/nope/members"}, []string{""},
			`team "nope" not found (GET ` + srv.URL + `/api/teams/nope/members): "tori teams" lists your teams`},
		{"members invite", []string{"members", "invite", "cy@example.com", "--role", "viewer", "--team", "acme"}, nil, 0,
			[]string{`POST /api/teams/acme/invitations {"email":"cy@example.com","role":"viewer"}`},
			[]string{"Invited cy@example.com to acme as viewer; the invitation expires 2026-11-11T00:00:00.000Z (id i1)."}, ""},
		{"members invite over the plan", []string{"members", "invite", "cy@example.com", "--role", "viewer", "--team", "full"}, nil, 1,
			[]string{`POST /api/teams/full/invitations {"email":"cy@example.com","role":"viewer"}`}, []string{""}, `"tori plans" shows each plan's limits`},
		{"members invite without a role", []string{"members", "invite", "cy@example.com", "--team", "acme"}, nil, 2, nil, []string{""}, "--role is required"},
		{"members invite with an unknown role", []string{"members", "invite", "cy@example.com", "--role", "god", "--team", "acme"}, nil, 2, nil, []string{""}, `"god" is not a role`},
		{"members set-role by email", []string{"members", "set-role", "bob@example.com", "admin", "--team", "acme"}, nil, 0,
			[]string{"GET /api/teams/acme/members", `PATCH /api/teams/acme/members/u2 {"role":"admin"}`}, []string{"bob@example.com is now admin of acme."}, ""},
		{"members remove", []string{"members", "remove", "u2", "--yes", "--team", "acme"}, nil, 0,
			[]string{"DELETE /api/teams/acme/members/u2"}, []string{"Removed u2 from acme."}, ""},
		{"the last owner stays", []string{"members", "remove", "u1", "--yes", "--team", "acme"}, nil, 1,
			[]string{"DELETE /api/teams/acme/members/u1"}, []string{""}, "last_owner: a team keeps at least one owner"},

		{"invitations list", []string{"invitations", "list", "--team", "acme"}, nil, 0, []string{"GET /api/teams/acme/invitations"}, []string{
			"ID EMAIL ROLE INVITED BY EXPIRES",
			"i1 cy@example.com viewer ada@example.com 2026-11-11T00:00:00.000Z",
		}, ""},
		{"invitations revoke", []string{"invitations", "revoke", "i1", "--team", "acme"}, nil, 0, []string{"DELETE /api/teams/acme/invitations/i1"}, nil, ""},
		{"invitations accept the mail's link", []string{"invitations", "accept", "https://console.test/invitations/accept?token=abc_123"}, nil, 0,
			[]string{`POST /api/invitations/accept {"token":"abc_123"}`}, []string{"Joined team acme as owner. Its apps: tori apps --team acme"}, ""},
		{"invitations accept needs a session", []string{"invitations", "accept", "cli-token"}, nil, 1,
			[]string{`POST /api/invitations/accept {"token":"cli-token"}`}, []string{""}, "open the invitation's link in the console"},

		{"audit follows the cursor with --all", []string{"audit", "--team", "acme", "--limit", "1", "--all", "--app", "web"}, nil, 0,
			[]string{"GET /api/teams/acme/audit?app=web&limit=1", "GET /api/teams/acme/audit?app=web&cursor=c2&limit=1"}, []string{
				"AT ACTOR ACTION TARGET APP OUTCOME IP DETAILS",
				"2026-11-05T10:00:00.000Z bob@example.com app.delete apps/web web denied 203.0.113.9 -",
				"2026-11-05T09:00:00.000Z ada@example.com, token tk1 env.set apps/web/env web success 203.0.113.7 keys=A,B",
			}, ""},
		{"audit one page says there is more", []string{"audit", "--team", "acme", "--action", "app.delete", "--actor", "bob@example.com"}, nil, 0,
			[]string{"GET /api/teams/acme/audit?action=app.delete&actor=bob%40example.com"}, nil, "More entries: add --all"},
		{"audit beyond retention", []string{"audit", "--team", "ada", "--since", "2020-01-01T00:00:00Z"}, nil, 1,
			[]string{"GET /api/teams/ada/audit?start=2020-01-01T00%3A00%3A00.000Z"}, []string{""}, "beyond_retention: nestling keeps 7 days of audit log"},
		{"audit names the role it needs", []string{"audit", "--team", "mine"}, nil, 1, []string{"GET /api/teams/mine/audit"}, []string{""},
			"this needs the admin role in the team"},
		{"audit with a bad --since sends nothing", []string{"audit", "--team", "acme", "--since", "yesterday"}, nil, 2, nil, []string{""}, "--since"},

		{"tokens create scoped", []string{"tokens", "create", "ci", "--scope", "deploy", "--app", "web", "--expires", "90d", "--team", "acme"}, nil, 0,
			[]string{`POST /api/tokens {"name":"ci","team":"acme","scopes":["deploy"],"apps":["web"],"expiresIn":7776000}`}, []string{"svc_abcdSECRET"},
			"Created token ci (id tk9) for acme: deploy on web, until 2027-02-03T00:00:00.000Z"},
		{"tokens create scoped in the personal team", []string{"tokens", "create", "ci", "--scope", "read,deploy", "--expires", "2027-01-01T00:00:00Z"}, nil, 0,
			[]string{"GET /api/teams", `POST /api/tokens {"name":"ci","team":"ada","scopes":["read","deploy"],"expiresAt":"2027-01-01T00:00:00.000Z"}`}, nil, ""},
		{"tokens create names the scope it needs", []string{"tokens", "create", "ops", "--scope", "admin", "--team", "acme"}, nil, 1,
			[]string{`POST /api/tokens {"name":"ops","team":"acme","scopes":["admin"]}`}, []string{""},
			"insufficient_scope: a deploy token cannot make an admin token (POST " + srv.URL + "/api/tokens): this token's scope does not cover it (it needs admin)"},
		{"tokens create --app without --scope sends nothing", []string{"tokens", "create", "ci", "--app", "web"}, nil, 2, nil, []string{""}, "add --scope"},
		{"tokens create with a bad scope sends nothing", []string{"tokens", "create", "ci", "--scope", "root"}, nil, 2, nil, []string{""}, `--scope "root"`},
		{"tokens list shows team, scopes, apps and expiry", []string{"tokens", "list"}, nil, 0, []string{"GET /api/tokens"}, []string{
			"ID NAME PREFIX TEAM SCOPES APPS EXPIRES CREATED LAST USED",
			"tk0 laptop svc_0000 all full all never 2026-11-01T00:00:00.000Z never",
			"tk1 ci svc_abcd acme deploy web 2027-02-03T00:00:00.000Z 2026-11-05T00:00:00.000Z 2026-11-06T00:00:00.000Z",
		}, ""},
		{"tokens list --all lists the team's", []string{"tokens", "list", "--all", "--team", "acme"}, nil, 0, []string{"GET /api/teams/acme/tokens"}, []string{
			"ID NAME PREFIX OWNER SCOPES APPS EXPIRES LAST USED",
			"tk1 ci svc_abcd ada@example.com deploy web 2027-02-03T00:00:00.000Z never",
		}, ""},
		{"tokens revoke --all revokes the team's", []string{"tokens", "revoke", "tk1", "--all", "--team", "acme", "--yes"}, nil, 0,
			[]string{"DELETE /api/teams/acme/tokens/tk1"}, []string{"Revoked token tk1."}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.take()
			code, out, stderr := runEnv(t, srv.URL, tc.env, tc.args...)
			calls := fake.take()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			if tc.err != "" && !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q in it", stderr, tc.err)
			}
			if tc.out != nil && !reflect.DeepEqual(lines(out), tc.out) {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(tc.out, "\n"))
			}
			if !reflect.DeepEqual(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

// --json --all gives one document of every page's entries, so a script reads one answer.
func TestAuditAllAsJSON(t *testing.T) {
	srv := httptest.NewServer(&teamAPI{})
	defer srv.Close()
	code, out, stderr := run(t, srv.URL, "", "audit", "--team", "acme", "--all", "--json")
	if code != 0 || strings.Count(out, `"id": "e`) != 2 || !strings.Contains(out, `"nextCursor": null`) {
		t.Fatalf("exit %d stdout %s stderr %s", code, out, stderr)
	}
}

func TestParseTokenCreate(t *testing.T) {
	now := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		f    TokenFlags
		want *api.TokenCreate
		err  string
	}{
		{"laptop", TokenFlags{}, nil, ""},
		{"ci", TokenFlags{Scopes: []string{"deploy"}, Apps: []string{"web", "api,web"}, Expires: "30d"},
			&api.TokenCreate{Name: "ci", Scopes: []string{"deploy"}, Apps: []string{"web", "api"}, ExpiresIn: 30 * 86400}, ""},
		{"ci", TokenFlags{Scopes: []string{"read", "write"}, Expires: "12h"}, &api.TokenCreate{Name: "ci", Scopes: []string{"read", "write"}, ExpiresIn: 43200}, ""},
		{"ci", TokenFlags{Scopes: []string{"read"}, Expires: "45m"}, &api.TokenCreate{Name: "ci", Scopes: []string{"read"}, ExpiresIn: 2700}, ""},
		{"ci", TokenFlags{Scopes: []string{"admin"}, Expires: "2027-01-01T01:00:00+01:00"}, &api.TokenCreate{Name: "ci", Scopes: []string{"admin"}, ExpiresAt: "2027-01-01T00:00:00.000Z"}, ""},
		{"ci", TokenFlags{Scopes: []string{"read"}}, &api.TokenCreate{Name: "ci", Scopes: []string{"read"}}, ""},
		{"ci", TokenFlags{Scopes: []string{"full"}}, nil, `--scope "full"`},
		{"ci", TokenFlags{Scopes: []string{"read"}, Expires: "30s"}, nil, "at least a minute"},
		{"ci", TokenFlags{Scopes: []string{"read"}, Expires: "0d"}, nil, "--expires"},
		{"ci", TokenFlags{Scopes: []string{"read"}, Expires: "soon"}, nil, "--expires"},
		{"ci", TokenFlags{Scopes: []string{"read"}, Expires: "2020-01-01T00:00:00Z"}, nil, "already past"},
		{"ci", TokenFlags{Scopes: []string{"read"}, Apps: []string{"Web"}}, nil, `--app "Web"`},
		{"ci", TokenFlags{Expires: "30d"}, nil, "add --scope"},
		{" ", TokenFlags{}, nil, "needs a name"},
	}
	for _, tc := range cases {
		got, err := ParseTokenCreate(tc.name, tc.f, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %+v: err %v, want %q", tc.name, tc.f, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q %+v: %+v %v, want %+v", tc.name, tc.f, got, err, tc.want)
		}
	}
}

func TestParseAudit(t *testing.T) {
	now := time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)
	q, err := ParseAudit(AuditFlags{Since: "24h", Until: "2026-11-05T11:00:00Z", Action: " app.delete ", Limit: 200}, now)
	want := api.AuditQuery{Start: "2026-11-04T12:00:00.000Z", End: "2026-11-05T11:00:00.000Z", Action: "app.delete", Limit: 200}
	if err != nil || q != want {
		t.Fatalf("%+v %v, want %+v", q, err, want)
	}
	if q, err := ParseAudit(AuditFlags{Since: "7d"}, now); err != nil || q.Start != "2026-10-29T12:00:00.000Z" {
		t.Fatalf("7d: %+v %v", q, err)
	}
	for _, f := range []AuditFlags{{Since: "-1h"}, {Until: "later"}, {Limit: 201}, {Limit: -1}} {
		if _, err := ParseAudit(f, now); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
}

func TestInvitationCode(t *testing.T) {
	for in, want := range map[string]string{
		"abc_123": "abc_123",
		" https://console.tori.example/invitations/accept?token=abc_123 ": "abc_123",
		"https://console.tori.example/invitations/accept":                 "",
	} {
		if got := InvitationCode(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
