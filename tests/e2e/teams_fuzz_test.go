package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/tests/e2e/harness"
)

// fuzzObjects fill a route template's placeholders.
type fuzzObjects struct {
	label                                       string
	team, slug, userID, key, cron, hostname     string
	tokenID, invitationID, deployID, anyOtherID string
}

// path is tpl with every placeholder filled. {id} is whatever object the segment before it
// names.
func (o fuzzObjects) path(tpl string) string {
	segs := strings.Split(tpl, "/")
	for i, seg := range segs {
		v := ""
		switch seg {
		case "{team}":
			v = o.team
		case "{slug}":
			v = o.slug
		case "{userId}":
			v = o.userID
		case "{key}":
			v = o.key
		case "{name}":
			v = o.cron
		case "{hostname}":
			v = o.hostname
		case "{id}":
			switch segs[i-1] {
			case "tokens":
				v = o.tokenID
			case "invitations":
				v = o.invitationID
			case "deploys":
				v = o.deployID
			default:
				v = o.anyOtherID
			}
		default:
			continue
		}
		segs[i] = url.PathEscape(v)
	}
	return strings.Join(segs, "/")
}

func randomObjects() fuzzObjects {
	h := harness.Hex(4)
	return fuzzObjects{
		label: "random", team: "nobody-" + h, slug: "e2e-nobody-" + h, userID: uuid.NewString(), key: "NOBODY_" + strings.ToUpper(h),
		cron: "nobody-" + h, hostname: "nobody-" + h + ".example.com", tokenID: uuid.NewString(), invitationID: uuid.NewString(),
		deployID: uuid.NewString(), anyOtherID: uuid.NewString(),
	}
}

// fuzzBody is a valid-looking body for a route, so a route whose guard were missing would act
// rather than stop at input checks.
func fuzzBody(r access.Route, team string) any {
	switch r.Method + " " + r.Template {
	case "POST /api/apps":
		return map[string]any{"name": "e2e-fuzz-" + harness.Hex(3), "team": team}
	case "PUT /api/apps/{slug}/env":
		return map[string]string{"key": "FUZZ_KEY", "value": "fuzz"}
	case "PATCH /api/apps/{slug}/env":
		return map[string]any{"set": map[string]string{"FUZZ_KEY": "fuzz"}}
	case "POST /api/apps/{slug}/domains":
		return map[string]string{"hostname": "fuzz-" + harness.Hex(3) + ".example.com"}
	case "POST /api/apps/{slug}/deploys":
		return map[string]any{"image": "registry.invalid/fuzz:1"}
	case "PATCH /api/apps/{slug}/formation":
		return map[string]any{"updates": []map[string]any{{"type": "web", "quantity": 0}}}
	case "POST /api/apps/{slug}/crons":
		return map[string]any{"name": "fuzz", "schedule": "0 3 * * *", "command": "true"}
	case "PATCH /api/apps/{slug}/crons/{name}":
		return map[string]any{"enabled": false}
	case "POST /api/apps/{slug}/database/restores":
		return map[string]any{"dumpId": uuid.NewString()}
	case "PATCH /api/teams/{team}":
		return map[string]any{"name": "fuzzed"}
	case "PATCH /api/teams/{team}/members/{userId}":
		return map[string]any{"role": "viewer"}
	case "POST /api/teams/{team}/invitations":
		return map[string]any{"email": harness.Email("fuzz-invitee"), "role": "viewer"}
	case "POST /api/billing/checkout":
		return map[string]any{"plan": "songbird", "interval": "month", "team": team}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodDelete {
		return nil
	}
	if r.Locator == access.TeamParam {
		return map[string]any{"team": team}
	}
	return map[string]any{}
}

// foreignAnswer checks one answer to a request on objects the caller may not see: never 2xx,
// 403 or 5xx; 404 when exact (the other person's real objects, refused before any input
// check), else 404 or a refusal of malformed input. It returns whether the answer was 404.
func foreignAnswer(t *testing.T, what string, r *harness.Response, exact bool, secrets []string, sent string) bool {
	t.Helper()
	switch {
	case r.Status == http.StatusNotFound:
	case exact:
		t.Errorf("%s: %d, want 404: %s", what, r.Status, r.Body)
	case r.Status == http.StatusBadRequest || r.Status == http.StatusMethodNotAllowed || r.Status == http.StatusConflict:
	default:
		t.Errorf("%s: %d, want 404 (or 400/405/409): %s", what, r.Status, r.Body)
	}
	noLeak(t, what, r.Body, secrets, sent)
	return r.Status == http.StatusNotFound
}

// noLeak fails when body names one of secrets (the other person's ids, slugs and address)
// that the request itself did not carry.
func noLeak(t *testing.T, what string, body []byte, secrets []string, sent string) {
	t.Helper()
	for _, s := range secrets {
		if len(s) >= 8 && strings.Contains(string(body), s) && !strings.Contains(sent, s) {
			t.Errorf("%s leaks %q: %s", what, s, body)
		}
	}
}

// crossTeamFuzz walks every authenticated route of the contract's table as person A on
// person B's real objects and on random ones; then a token pinned to one of A's apps on A's
// other app.
func crossTeamFuzz(t *testing.T, s *harness.Stack) {
	hex := harness.Hex(3)

	// B: a team with an app, an env variable, a deploy, an invitation and two tokens; and an
	// app in the personal team.
	b := s.NewAccount(t, "fuzz-b")
	bPersonal := personalTeam(t, s, b.Token)
	bTeam := createTeam(t, s, b.Token, "fuzz-b-"+hex)
	bApp := createTeamApp(t, s, b.Token, bTeam.Slug, "e2e-fb-"+hex, "static")
	bOwnApp := createTeamApp(t, s, b.Token, "", "e2e-fbp-"+hex, "static")
	if bOwnApp["team"] != bPersonal.Slug {
		t.Fatalf("an app made without team is in %v, want the personal team %s", bOwnApp["team"], bPersonal.Slug)
	}
	bSlug := bApp["slug"].(string)
	bKey := "B_ONLY_" + strings.ToUpper(hex)
	expectStatus(t, "B sets env", call(s, t, http.MethodPut, "/api/apps/"+bSlug+"/env", b.Token, map[string]string{"key": bKey, "value": "b-value"}), http.StatusCreated)
	dr := deployFiles(t, s, b.Token, bSlug, sitePart{"index.html", "b"})
	expectStatus(t, "B deploys", dr, http.StatusCreated)
	bDeploy := dr.Map(t)["id"].(string)
	bCron := ""
	if r := post(s, t, "/api/apps/"+bSlug+"/crons", b.Token, map[string]any{"name": "nightly", "schedule": "0 3 * * *", "command": "true"}); r.Status == http.StatusCreated {
		bCron = "nightly"
	} else {
		t.Logf("B's static app takes no cron (%d); {name} is filled with a random name only", r.Status)
	}
	inviteeEmail := harness.Email("fuzz-b-invitee")
	inv, _ := invite(t, s, b.Token, bTeam.Slug, inviteeEmail, "developer")
	bFull := createToken(t, s, b.Token, map[string]any{"name": "b-full"})
	bScoped := createToken(t, s, b.Token, map[string]any{"name": "b-scoped", "team": bTeam.Slug, "scopes": []string{"read"}, "expiresIn": 3600})

	secrets := []string{bTeam.ID, bTeam.Slug, bPersonal.ID, bPersonal.Slug, bSlug, bApp["id"].(string), bOwnApp["slug"].(string), bOwnApp["id"].(string),
		b.UserID, b.Email, bKey, bDeploy, inv["id"].(string), inviteeEmail, bFull["id"].(string), bScoped["id"].(string), bFull["token"].(string), bScoped["token"].(string)}

	// A: a team with two apps.
	a := s.NewAccount(t, "fuzz-a")
	aTeam := createTeam(t, s, a.Token, "fuzz-a-"+hex)
	a1, a2 := "e2e-fa1-"+hex, "e2e-fa2-"+hex
	createTeamApp(t, s, a.Token, aTeam.Slug, a1, "static")
	createTeamApp(t, s, a.Token, aTeam.Slug, a2, "static")
	// Controls: A's session works on A's own things, so the 404s below are about B.
	expectStatus(t, "A reads a1", s.Get(t, "/api/apps/"+a1, a.Token), http.StatusOK)
	expectStatus(t, "A reads its team", s.Get(t, "/api/teams/"+aTeam.Slug, a.Token), http.StatusOK)

	bReal := fuzzObjects{label: "B's team", team: bTeam.Slug, slug: bSlug, userID: b.UserID, key: bKey, cron: bCron, hostname: "www." + bSlug + ".example.com",
		tokenID: bScoped["id"].(string), invitationID: inv["id"].(string), deployID: bDeploy, anyOtherID: uuid.NewString()}
	if bCron == "" {
		bReal.cron = "nightly"
	}
	bPers := bReal
	bPers.label, bPers.team, bPers.slug, bPers.tokenID = "B's personal team", bPersonal.Slug, bOwnApp["slug"].(string), bFull["id"].(string)
	// A's own team and app with B's objects inside: a member must not reach another team's
	// object through their own team's path.
	mixed := bReal
	mixed.label, mixed.team, mixed.slug = "A's team with B's objects", aTeam.Slug, a1

	walked := 0
	for _, r := range access.All() {
		name := r.Method + " " + r.Template
		switch r.Locator {
		case access.Personal:
			walked += fuzzPersonal(t, s, r, a, aTeam, bTeam, bSlug, bReal, bPers, secrets)
		case access.MemberTeams:
			if r.Template == "/api/apps" {
				for _, team := range []string{bTeam.Slug, bPersonal.Slug, randomObjects().team} {
					path := "/api/apps?team=" + team
					foreignAnswer(t, "A "+name+"?team="+team, s.Get(t, path, a.Token), !strings.HasPrefix(team, "nobody-"), secrets, path)
					walked++
				}
			}
			res := call(s, t, r.Method, r.Template, a.Token, nil)
			expectStatus(t, "A "+name, res, http.StatusOK)
			noLeak(t, "A "+name, res.Body, secrets, "")
			walked++
		case access.TeamParam:
			for _, team := range []string{bTeam.Slug, bPersonal.Slug, randomObjects().team} {
				path := r.Template + "?team=" + url.QueryEscape(team)
				body := fuzzBody(r, team)
				raw, _ := json.Marshal(body)
				foreignAnswer(t, "A "+r.Method+" "+path, call(s, t, r.Method, path, a.Token, body), !strings.HasPrefix(team, "nobody-"), secrets, path+string(raw))
				// And the team named in the body alone.
				if body != nil && r.Method != http.MethodGet {
					foreignAnswer(t, "A "+name+" body team "+team, call(s, t, r.Method, r.Template, a.Token, body), !strings.HasPrefix(team, "nobody-"), secrets, string(raw))
					walked++
				}
				walked++
			}
		case access.AppPath, access.TeamPath:
			rnd := randomObjects()
			rndRes := call(s, t, r.Method, rnd.path(r.Template), a.Token, fuzzBody(r, rnd.team))
			rndIs404 := foreignAnswer(t, "A "+r.Method+" "+rnd.path(r.Template), rndRes, false, secrets, rnd.path(r.Template))
			for _, o := range []fuzzObjects{bReal, bPers} {
				path := o.path(r.Template)
				body := fuzzBody(r, o.team)
				raw, _ := json.Marshal(body)
				res := call(s, t, r.Method, path, a.Token, body)
				if foreignAnswer(t, "A "+r.Method+" "+path+" ("+o.label+")", res, true, secrets, path+string(raw)) && rndIs404 {
					// B's object answers exactly as nothing at all.
					if got, want := notFoundBody(t, res), notFoundBody(t, rndRes); got.Error != want.Error || got.Code != want.Code {
						t.Errorf("A %s %s answers %s; a random one %s", r.Method, path, res.Body, rndRes.Body)
					}
				}
				walked++
			}
			if hasObjectPlaceholder(r.Template) {
				path := mixed.path(r.Template)
				foreignAnswer(t, "A "+r.Method+" "+path+" ("+mixed.label+")", call(s, t, r.Method, path, a.Token, fuzzBody(r, mixed.team)), false, secrets, path)
				walked++
			}
			walked++
		default:
			t.Errorf("%s: a locator the walk does not know (%d)", name, r.Locator)
		}
	}
	t.Logf("walked %d requests over %d routes", walked, len(access.All()))

	// B's things are as B left them.
	expectStatus(t, "B's app", s.Get(t, "/api/apps/"+bSlug, b.Token), http.StatusOK)
	if v, ok := envValue(t, s, b.Token, bSlug, bKey); !ok || v == "" {
		t.Fatalf("B's variable is gone")
	}
	if _, ok := envValue(t, s, b.Token, bSlug, "FUZZ_KEY"); ok {
		t.Fatal("A's fuzz wrote B's env")
	}
	expectStatus(t, "B's full token", s.Get(t, "/api/account", bFull["token"].(string)), http.StatusOK)
	expectStatus(t, "B's scoped token", s.Get(t, "/api/apps/"+bSlug, bScoped["token"].(string)), http.StatusOK)
	if slugs, _ := appSlugs(t, s, b.Token, ""); len(slugs) != 2 {
		t.Fatalf("B's apps after the fuzz: %v", slugs)
	}
	if slugs, _ := appSlugs(t, s, a.Token, ""); len(slugs) != 2 {
		t.Fatalf("A's apps after the fuzz: %v", slugs)
	}
	var members []map[string]any
	s.Get(t, "/api/teams/"+bTeam.Slug+"/members", b.Token).JSON(t, &members)
	if len(members) != 1 || members[0]["userId"] != b.UserID || members[0]["role"] != "owner" {
		t.Fatalf("B's members after the fuzz: %v", members)
	}
	if ir := s.Get(t, "/api/teams/"+bTeam.Slug+"/invitations", b.Token); ir.Status != http.StatusOK || !strings.Contains(string(ir.Body), inv["id"].(string)) {
		t.Fatalf("B's invitation after the fuzz: %d %s", ir.Status, ir.Body)
	}
	if tm := s.Get(t, "/api/teams/"+bTeam.Slug, b.Token); tm.Status != http.StatusOK || tm.Map(t)["name"] != bTeam.Name {
		t.Fatalf("B's team after the fuzz: %d %s", tm.Status, tm.Body)
	}
	// B's audit log holds nothing of A's: a stranger's 404s are not the team's.
	if _, log := audit(t, s, b.Token, bTeam.Slug, nil); strings.Contains(string(log.Body), a.UserID) || strings.Contains(string(log.Body), a.Email) {
		t.Fatalf("A's refused attempts are in B's audit log: %s", log.Body)
	}

	// A token pinned to a1 (with the widest scope) knows nothing of a2.
	pinned := createToken(t, s, a.Token, map[string]any{"name": "pinned", "team": aTeam.Slug, "scopes": []string{"admin"}, "apps": []string{a1}, "expiresIn": 3600})["token"].(string)
	expectStatus(t, "the pinned token reads a1", s.Get(t, "/api/apps/"+a1, pinned), http.StatusOK)
	if slugs, _ := appSlugs(t, s, pinned, "team="+aTeam.Slug); !slices.Equal(slugs, []string{a1}) {
		t.Fatalf("the pinned token lists %v", slugs)
	}
	for _, r := range access.All() {
		if r.Locator != access.AppPath {
			continue
		}
		o := randomObjects()
		o.slug = a2
		path := o.path(r.Template)
		res := call(s, t, r.Method, path, pinned, fuzzBody(r, aTeam.Slug))
		if res.Status != http.StatusNotFound {
			t.Errorf("pinned to a1: %s %s: %d, want 404: %s", r.Method, path, res.Status, res.Body)
		}
	}
	expectStatus(t, "a2 still there", s.Get(t, "/api/apps/"+a2, a.Token), http.StatusOK)
}

// hasObjectPlaceholder: the template names an object inside the team or app.
func hasObjectPlaceholder(tpl string) bool {
	for _, p := range []string{"{id}", "{userId}", "{key}", "{name}", "{hostname}"} {
		if strings.Contains(tpl, p) {
			return true
		}
	}
	return false
}

// fuzzPersonal tries A's personal routes on B's objects where they can name one; it returns
// how many requests it made.
func fuzzPersonal(t *testing.T, s *harness.Stack, r access.Route, a harness.Account, aTeam, bTeam teamJSON, bSlug string, bReal, bPers fuzzObjects, secrets []string) int {
	name := r.Method + " " + r.Template
	switch name {
	case "DELETE /api/tokens/{id}":
		for _, id := range []string{bReal.tokenID, bPers.tokenID} {
			foreignAnswer(t, "A revokes B's token "+id, call(s, t, r.Method, "/api/tokens/"+id, a.Token, nil), true, secrets, id)
		}
		foreignAnswer(t, "A revokes a random token", call(s, t, r.Method, "/api/tokens/"+uuid.NewString(), a.Token, nil), false, secrets, "")
		return 3
	case "POST /api/tokens":
		body := map[string]any{"name": "fuzz", "team": bTeam.Slug, "scopes": []string{"read"}, "expiresIn": 3600}
		foreignAnswer(t, "A makes a token for B's team", post(s, t, r.Template, a.Token, body), false, secrets, bTeam.Slug)
		body = map[string]any{"name": "fuzz", "team": aTeam.Slug, "scopes": []string{"read"}, "apps": []string{bSlug}, "expiresIn": 3600}
		foreignAnswer(t, "A pins a token to B's app", post(s, t, r.Template, a.Token, body), false, secrets, bSlug)
		return 2
	case "POST /api/invitations/accept":
		res := post(s, t, r.Template, a.Token, map[string]string{"token": "inv_" + harness.Hex(16)})
		foreignAnswer(t, "A accepts a made-up invitation", res, false, secrets, "")
		return 1
	}
	if strings.Contains(r.Template, "{") {
		t.Errorf("%s names an object the walk does not fill", name)
		return 0
	}
	if r.Method == http.MethodGet {
		res := s.Get(t, r.Template, a.Token)
		expectStatus(t, "A "+name, res, http.StatusOK)
		noLeak(t, "A "+name, res.Body, secrets, "")
		return 1
	}
	// The rest act on A's own sign-in and settings (logout, the command-line sign-in, the
	// account, a new team of A's), naming nothing of anyone else's.
	t.Logf("not walked: %s (A's own, names no object)", name)
	return 0
}
