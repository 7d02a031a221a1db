package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/access"
	"tori.dev/tests/e2e/harness"
)

// TestTeams is issue #39 end to end on one stack: roles and the audit log, scoped and
// expiring tokens, and a walk of the whole route table across teams. The sub-tests run one
// after another (run one with -run 'TestTeams/ScopedTokens'); the only long wait, a token's
// minute, runs beside the others: its token is made first and checked last.
func TestTeams(t *testing.T) {
	s := defaultStack(t)
	exp := startExpiringToken(t, s)
	t.Run("RolesAndAudit", func(t *testing.T) { teamsRolesAndAudit(t, s) })
	t.Run("ScopedTokens", func(t *testing.T) { scopedTokens(t, s) })
	t.Run("CrossTeamFuzz", func(t *testing.T) { crossTeamFuzz(t, s) })
	t.Run("TokenExpiry", func(t *testing.T) { exp.check(t, s) })
}

func teamsRolesAndAudit(t *testing.T, s *harness.Stack) {
	hex := harness.Hex(3)
	owner := s.NewAccount(t, "team-owner")

	// The personal team: listed, owned, and neither deletable nor shareable.
	personal := personalTeam(t, s, owner.Token)
	if personal.Role != "owner" || personal.Plan != "nestling" || personal.Slug == "" {
		t.Fatalf("personal team %+v", personal)
	}
	expectCode(t, "DELETE the personal team", call(s, t, http.MethodDelete, "/api/teams/"+personal.Slug, owner.Token, nil), http.StatusConflict, codePersonalTeam)
	expectCode(t, "invite into the personal team", post(s, t, "/api/teams/"+personal.Slug+"/invitations", owner.Token,
		map[string]string{"email": harness.Email("nobody"), "role": "developer"}), http.StatusConflict, codePersonalTeam)

	team := createTeam(t, s, owner.Token, "Rollers "+hex)
	if got := s.Get(t, "/api/teams/"+team.Slug, owner.Token); got.Status != http.StatusOK || !strings.Contains(string(got.Body), team.ID) {
		t.Fatalf("GET the new team: %d %s", got.Status, got.Body)
	}
	e := expectCode(t, "a second nestling team", post(s, t, "/api/teams", owner.Token, map[string]string{"name": "Second " + hex}), http.StatusForbidden, codeTeamLimit)
	if e.Limit == nil || *e.Limit != 1 || e.Plan != "nestling" {
		t.Fatalf("team limit body %+v", e)
	}
	if n := len(listTeams(t, s, owner.Token)); n != 2 {
		t.Fatalf("owner lists %d teams, want the personal one and %s", n, team.Slug)
	}

	x := "e2e-x-" + hex
	createTeamApp(t, s, owner.Token, team.Slug, x, "static")
	const plaintext = "e2e-team-plaintext-4b7d"
	expectStatus(t, "owner sets env", call(s, t, http.MethodPut, "/api/apps/"+x+"/env", owner.Token, map[string]string{"key": "SECRET", "value": plaintext}), http.StatusCreated)

	// The invitation: its link is the invited address's alone, and single use.
	devEmail := harness.Email("team-dev")
	inv, code := invite(t, s, owner.Token, team.Slug, devEmail, "developer")
	if exp, err := time.Parse(time.RFC3339, anyString(inv["expiresAt"])); err != nil || exp.Before(time.Now().Add(7*24*time.Hour-time.Hour)) || exp.After(time.Now().Add(7*24*time.Hour+time.Hour)) {
		t.Fatalf("invitation expiresAt %v, want in 7 days", inv["expiresAt"])
	}
	third := s.NewAccount(t, "team-third")
	expectCode(t, "another address accepts", post(s, t, "/api/invitations/accept", third.Token, map[string]string{"token": code}), http.StatusForbidden, codeEmailMismatch)
	dev := s.SignIn(t, devEmail)
	if joined := accept(t, s, dev.Token, code); joined.Slug != team.Slug || joined.Role != "developer" || joined.Personal {
		t.Fatalf("joined %+v", joined)
	}
	expectCode(t, "the link a second time", post(s, t, "/api/invitations/accept", dev.Token, map[string]string{"token": code}), http.StatusBadRequest, codeInvalidToken)
	expectStatus(t, "the third person sees nothing of the team", s.Get(t, "/api/teams/"+team.Slug, third.Token), http.StatusNotFound)

	var members []map[string]any
	mr := s.Get(t, "/api/teams/"+team.Slug+"/members", owner.Token)
	expectStatus(t, "members", mr, http.StatusOK)
	mr.JSON(t, &members)
	roles := map[string]string{}
	for _, m := range members {
		roles[m["userId"].(string)] = m["role"].(string)
	}
	if len(members) != 2 || roles[owner.UserID] != "owner" || roles[dev.UserID] != "developer" {
		t.Fatalf("members %s", mr.Body)
	}

	// The developer: sees x in the team, writes env, may not delete the app.
	within(t, time.Now(), 2*time.Second, "the developer lists x", func() bool {
		slugs, list := appSlugs(t, s, dev.Token, "")
		i := slices.Index(slugs, x)
		return i >= 0 && list[i]["team"] == team.Slug
	})
	if slugs, _ := appSlugs(t, s, dev.Token, "team="+team.Slug); !slices.Equal(slugs, []string{x}) {
		t.Fatalf("?team=%s lists %v", team.Slug, slugs)
	}
	const devValue = "e2e-dev-plaintext-91ce"
	expectStatus(t, "developer sets env", call(s, t, http.MethodPut, "/api/apps/"+x+"/env", dev.Token, map[string]string{"key": "DEV_KEY", "value": devValue}), http.StatusCreated)

	// A stranger's attempt first: it is not the team's to see, so never an entry.
	stranger := s.NewAccount(t, "team-stranger")
	expectStatus(t, "stranger deletes x", call(s, t, http.MethodDelete, "/api/apps/"+x, stranger.Token, nil), http.StatusNotFound)

	denied := expectCode(t, "developer deletes x", call(s, t, http.MethodDelete, "/api/apps/"+x, dev.Token, nil), http.StatusForbidden, access.CodeInsufficientRole)
	if denied.RequiredRole != access.Admin.String() || denied.Message == "" {
		t.Fatalf("refusal body %+v, want requiredRole admin", denied)
	}
	expectStatus(t, "x survives", s.Get(t, "/api/apps/"+x, owner.Token), http.StatusOK)

	entry, _ := waitAudit(t, s, owner.Token, team.Slug, 5*time.Second, "the developer's refused delete", func(e auditEntry) bool {
		return e.Action == "app.delete" && e.Outcome == auditOutcomeDenied && e.Actor.UserID == dev.UserID
	})
	if entry.Actor.Email != devEmail || entry.Actor.Type != auditActorUser || entry.App != x || entry.ID == "" || entry.IP == "" {
		t.Fatalf("denied entry %+v", entry)
	}
	if _, err := time.Parse(time.RFC3339, entry.At); err != nil {
		t.Fatalf("entry at %q", entry.At)
	}
	// The developer's env write is there too, by key, never by value.
	waitAudit(t, s, owner.Token, team.Slug, 5*time.Second, "the developer's env write", func(e auditEntry) bool {
		return e.Action == "env.replace" && e.Outcome == auditOutcomeSuccess && e.Actor.UserID == dev.UserID && e.App == x
	})
	_, log := audit(t, s, owner.Token, team.Slug, url.Values{"limit": {"200"}})
	for _, secret := range []string{plaintext, devValue, owner.Token, dev.Token} {
		if strings.Contains(string(log.Body), secret) {
			t.Fatalf("the audit log carries a secret or a value (%s…): %s", secret[:8], log.Body)
		}
	}
	if strings.Contains(string(log.Body), stranger.UserID) || strings.Contains(string(log.Body), stranger.Email) {
		t.Fatalf("a stranger's 404 became an entry: %s", log.Body)
	}
	// Filters narrow to the entry.
	p, _ := audit(t, s, owner.Token, team.Slug, url.Values{"action": {"app.delete"}, "actor": {dev.UserID}})
	if len(p.Entries) == 0 {
		t.Fatal("?action=app.delete&actor=<developer> finds nothing")
	}
	for _, e := range p.Entries {
		if e.Action != "app.delete" || e.Actor.UserID != dev.UserID {
			t.Fatalf("filtered log holds %+v", e)
		}
	}
	expectCode(t, "the developer reads the audit log", s.Get(t, "/api/teams/"+team.Slug+"/audit", dev.Token), http.StatusForbidden, access.CodeInsufficientRole)

	// Demoted to viewer: within a second the env is read-only, still masked.
	r := call(s, t, http.MethodPatch, "/api/teams/"+team.Slug+"/members/"+dev.UserID, owner.Token, map[string]string{"role": "viewer"})
	expectStatus(t, "demote to viewer", r, http.StatusOK)
	if m := r.Map(t); m["role"] != "viewer" || m["userId"] != dev.UserID {
		t.Fatalf("demoted member %s", r.Body)
	}
	demoted := time.Now()
	within(t, demoted, time.Second, "the viewer's env write refused", func() bool {
		r := call(s, t, http.MethodPut, "/api/apps/"+x+"/env", dev.Token, map[string]string{"key": "DEV_KEY", "value": devValue})
		if r.Status == http.StatusForbidden {
			e := expectCode(t, "viewer writes env", r, http.StatusForbidden, access.CodeInsufficientRole)
			if e.RequiredRole != access.Developer.String() {
				t.Fatalf("viewer's refusal names %q, want developer", e.RequiredRole)
			}
			return true
		}
		return false
	})
	var vars []map[string]any
	er := s.Get(t, "/api/apps/"+x+"/env", dev.Token)
	expectStatus(t, "viewer reads env", er, http.StatusOK)
	er.JSON(t, &vars)
	if len(vars) != 2 || strings.Contains(string(er.Body), plaintext) || strings.Contains(string(er.Body), devValue) {
		t.Fatalf("viewer's env %s", er.Body)
	}
	for _, v := range vars {
		if !strings.HasSuffix(v["value"].(string), maskedSuffix) {
			t.Fatalf("viewer reads an unmasked value: %s", er.Body)
		}
	}
	expectCode(t, "viewer deletes x", call(s, t, http.MethodDelete, "/api/apps/"+x, dev.Token, nil), http.StatusForbidden, access.CodeInsufficientRole)

	// A non-member: 404 for everything of the team, exactly as for what does not exist.
	none := s.Get(t, "/api/apps/e2e-none-"+hex, stranger.Token)
	expectStatus(t, "an app that does not exist", none, http.StatusNotFound)
	for _, path := range []string{"/api/apps/" + x, "/api/apps/" + x + "/env", "/api/teams/" + team.Slug, "/api/teams/" + team.Slug + "/audit", "/api/teams/" + team.Slug + "/members"} {
		r := s.Get(t, path, stranger.Token)
		expectStatus(t, "stranger GET "+path, r, http.StatusNotFound)
		if got, want := notFoundBody(t, r), notFoundBody(t, none); got.Error != want.Error || got.Code != want.Code {
			t.Fatalf("stranger GET %s answers %s, a missing app %s", path, r.Body, none.Body)
		}
	}
	if slugs, _ := appSlugs(t, s, stranger.Token, ""); slices.Contains(slugs, x) {
		t.Fatalf("stranger lists %v", slugs)
	}
	expectStatus(t, "stranger ?team=", s.Get(t, "/api/apps?team="+team.Slug, stranger.Token), http.StatusNotFound)

	// The last owner stays.
	expectCode(t, "last owner demotes themselves", call(s, t, http.MethodPatch, "/api/teams/"+team.Slug+"/members/"+owner.UserID, owner.Token, map[string]string{"role": "admin"}), http.StatusConflict, codeLastOwner)
	expectCode(t, "last owner leaves", call(s, t, http.MethodDelete, "/api/teams/"+team.Slug+"/members/"+owner.UserID, owner.Token, nil), http.StatusConflict, codeLastOwner)

	// A team that owns apps is not deleted, and only by an owner.
	e = expectCode(t, "viewer deletes the team", call(s, t, http.MethodDelete, "/api/teams/"+team.Slug, dev.Token, nil), http.StatusForbidden, access.CodeInsufficientRole)
	if e.RequiredRole != access.Owner.String() {
		t.Fatalf("team delete needs %q, want owner", e.RequiredRole)
	}
	expectCode(t, "DELETE a team with apps", call(s, t, http.MethodDelete, "/api/teams/"+team.Slug, owner.Token, nil), http.StatusConflict, codeTeamNotEmpty)
	expectStatus(t, "owner deletes x", call(s, t, http.MethodDelete, "/api/apps/"+x, owner.Token, nil), http.StatusOK)
	// identity learns of the deletion from apps' event.
	poll(t, 10*time.Second, "the emptied team deleted", func() bool {
		r := call(s, t, http.MethodDelete, "/api/teams/"+team.Slug, owner.Token, nil)
		if r.Status != http.StatusNoContent && r.Status != http.StatusConflict {
			t.Fatalf("DELETE the emptied team: %d %s", r.Status, r.Body)
		}
		return r.Status == http.StatusNoContent
	})
	expectStatus(t, "the deleted team", s.Get(t, "/api/teams/"+team.Slug, owner.Token), http.StatusNotFound)
	expectStatus(t, "its former member", s.Get(t, "/api/teams/"+team.Slug, dev.Token), http.StatusNotFound)
	if n := len(listTeams(t, s, owner.Token)); n != 1 {
		t.Fatalf("after deleting the team the owner lists %d teams", n)
	}
}

func scopedTokens(t *testing.T, s *harness.Stack) {
	hex := harness.Hex(3)
	owner := s.NewAccount(t, "scoped-owner")
	team := createTeam(t, s, owner.Token, "Pipeline "+hex)
	a, b := "e2e-a-"+hex, "e2e-b-"+hex
	createTeamApp(t, s, owner.Token, team.Slug, a, "static")
	createTeamApp(t, s, owner.Token, team.Slug, b, "static")

	created := createToken(t, s, owner.Token, map[string]any{"name": "ci-" + hex, "team": team.Slug, "scopes": []string{"deploy"}, "apps": []string{a}, "expiresIn": 3600})
	if created["team"] != team.Slug || !slices.Equal(anyStrings(created["scopes"]), []string{"deploy"}) || !slices.Equal(anyStrings(created["apps"]), []string{a}) {
		t.Fatalf("created deploy token %v", created)
	}
	expiresNear(t, created["expiresAt"], time.Hour)
	deploy := created["token"].(string)

	// It deploys a.
	if r := deployFiles(t, s, deploy, a, sitePart{"index.html", "deployed by a scoped token"}); r.Status != http.StatusCreated && r.Status != http.StatusAccepted {
		t.Fatalf("deploy a with the deploy token: %d %s", r.Status, r.Body)
	}
	expectStatus(t, "read a", s.Get(t, "/api/apps/"+a, deploy), http.StatusOK)
	expectStatus(t, "read a's deploys", s.Get(t, "/api/apps/"+a+"/deploys", deploy), http.StatusOK)
	// Nothing of b exists for it.
	if r := deployFiles(t, s, deploy, b, sitePart{"index.html", "must not land"}); r.Status != http.StatusNotFound {
		t.Fatalf("deploy b with a's token: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, ""}, {http.MethodGet, "/env"}, {http.MethodGet, "/deploys"}, {http.MethodPut, "/env"}, {http.MethodDelete, ""},
	} {
		var body any
		if c.method == http.MethodPut {
			body = map[string]string{"key": "K", "value": "v"}
		}
		expectStatus(t, c.method+" b"+c.path, call(s, t, c.method, "/api/apps/"+b+c.path, deploy, body), http.StatusNotFound)
	}
	// Its scope stops short of env.
	e := expectCode(t, "PUT env on a with deploy scope", call(s, t, http.MethodPut, "/api/apps/"+a+"/env", deploy, map[string]string{"key": "K", "value": "v"}), http.StatusForbidden, access.CodeInsufficientScope)
	if e.RequiredScope != access.Write.String() {
		t.Fatalf("requiredScope %q, want write", e.RequiredScope)
	}
	if slugs, list := appSlugs(t, s, deploy, ""); !slices.Equal(slugs, []string{a}) || list[0]["team"] != team.Slug {
		t.Fatalf("the pinned token lists %v", list)
	}
	expectCode(t, "a pinned token creates an app", post(s, t, "/api/apps", deploy, map[string]any{"team": team.Slug}), http.StatusForbidden, access.CodeInsufficientScope)
	if slugs, _ := appSlugs(t, s, owner.Token, "team="+team.Slug); len(slugs) != 2 {
		t.Fatalf("team apps after the pinned token's attempt: %v", slugs)
	}

	// From it, only tokens it covers.
	base := func() map[string]any {
		return map[string]any{"name": "child-" + harness.Hex(2), "team": team.Slug, "scopes": []string{"deploy"}, "apps": []string{a}, "expiresIn": 600}
	}
	broader := map[string]func(map[string]any){
		"write scope":    func(m map[string]any) { m["scopes"] = []string{"write"} },
		"unpinned":       func(m map[string]any) { delete(m, "apps") },
		"another app":    func(m map[string]any) { m["apps"] = []string{a, b} },
		"longer expiry":  func(m map[string]any) { m["expiresIn"] = 3 * 3600 },
		"the admin list": func(m map[string]any) { m["scopes"] = []string{"read", "admin"} },
	}
	for what, change := range broader {
		body := base()
		change(body)
		expectCode(t, "a child token with "+what, post(s, t, "/api/tokens", deploy, body), http.StatusForbidden, access.CodeInsufficientScope)
	}
	expectCode(t, "a full token from a scoped one", post(s, t, "/api/tokens", deploy, map[string]any{"name": "full-" + hex}), http.StatusForbidden, access.CodeSessionRequired)
	narrow := base()
	narrow["scopes"], narrow["expiresIn"] = []string{"read"}, 900
	child := createToken(t, s, deploy, narrow)
	expiresNear(t, child["expiresAt"], 15*time.Minute)
	read := child["token"].(string)
	expectStatus(t, "the read child reads a", s.Get(t, "/api/apps/"+a, read), http.StatusOK)
	e = expectCode(t, "the read child deploys", post(s, t, "/api/apps/"+a+"/deploys", read, map[string]any{"image": "registry.invalid/x:1"}), http.StatusForbidden, access.CodeInsufficientScope)
	if e.RequiredScope != access.Deploy.String() {
		t.Fatalf("requiredScope %q, want deploy", e.RequiredScope)
	}
	expectStatus(t, "the read child on b", s.Get(t, "/api/apps/"+b, read), http.StatusNotFound)
	expectStatus(t, "expiresIn under a minute", post(s, t, "/api/tokens", owner.Token, map[string]any{"name": "short", "team": team.Slug, "scopes": []string{"read"}, "expiresIn": 59}), http.StatusBadRequest)
	expectStatus(t, "expiry past a year", post(s, t, "/api/tokens", owner.Token, map[string]any{"name": "long", "team": team.Slug, "scopes": []string{"read"}, "expiresIn": 366 * 24 * 3600}), http.StatusBadRequest)
	expectStatus(t, "an unknown scope", post(s, t, "/api/tokens", owner.Token, map[string]any{"name": "odd", "team": team.Slug, "scopes": []string{"root"}, "expiresIn": 600}), http.StatusBadRequest)

	// Admins list the team's tokens, never their secrets.
	lr := s.Get(t, "/api/teams/"+team.Slug+"/tokens", owner.Token)
	expectStatus(t, "team tokens", lr, http.StatusOK)
	if !strings.Contains(string(lr.Body), created["id"].(string)) || strings.Contains(string(lr.Body), deploy) || strings.Contains(string(lr.Body), read) {
		t.Fatalf("team tokens %s", lr.Body)
	}

	// A removed member's tokens for the team answer 401 within a second, at once gone.
	dev := joinTeam(t, s, owner.Token, team.Slug, "developer", "scoped-dev")
	devTok := createToken(t, s, dev.Token, map[string]any{"name": "dev-ci", "team": team.Slug, "scopes": []string{"deploy"}, "expiresIn": 3600})
	secret := devTok["token"].(string)
	for range 2 { // cached at the gateway
		expectStatus(t, "the member's token", s.Get(t, "/api/apps/"+a, secret), http.StatusOK)
		expectStatus(t, "the member's session", s.Get(t, "/api/apps/"+a, dev.Token), http.StatusOK)
	}
	expectStatus(t, "remove the member", call(s, t, http.MethodDelete, "/api/teams/"+team.Slug+"/members/"+dev.UserID, owner.Token, nil), http.StatusNoContent)
	removed := time.Now()
	within(t, removed, time.Second, "the removed member's token answers 401", func() bool {
		return s.Get(t, "/api/apps/"+a, secret).Status == http.StatusUnauthorized
	})
	within(t, removed, time.Second, "the removed member's session sees 404", func() bool {
		return s.Get(t, "/api/apps/"+a, dev.Token).Status == http.StatusNotFound
	})
	expectStatus(t, "the removed member's token, again", s.Get(t, "/api/teams", secret), http.StatusUnauthorized)
	if lr := s.Get(t, "/api/teams/"+team.Slug+"/tokens", owner.Token); strings.Contains(string(lr.Body), devTok["id"].(string)) {
		t.Fatalf("a removed member's token is still listed: %s", lr.Body)
	}
	// And the owner's own tokens are untouched.
	expectStatus(t, "the owner's deploy token after a removal", s.Get(t, "/api/apps/"+a, deploy), http.StatusOK)
}

// expiringToken is a token of the least expiry, made when the stack starts and checked at the
// end, so its minute passes while the other sub-tests run.
type expiringToken struct {
	secret  string
	created time.Time
	problem string // what went wrong making it; reported by check
}

func startExpiringToken(t *testing.T, s *harness.Stack) *expiringToken {
	x := &expiringToken{}
	who := s.NewAccount(t, "expiring")
	tr := s.Get(t, "/api/teams", who.Token)
	var teams []teamJSON
	if tr.Status != http.StatusOK {
		x.problem = "GET /api/teams: " + statusOf(tr) + " " + string(tr.Body)
		return x
	}
	tr.JSON(t, &teams)
	slug := ""
	for _, tm := range teams {
		if tm.Personal {
			slug = tm.Slug
		}
	}
	x.created = time.Now()
	r := post(s, t, "/api/tokens", who.Token, map[string]any{"name": "minute", "team": slug, "scopes": []string{"read"}, "expiresIn": 60})
	if r.Status != http.StatusCreated {
		x.problem = "POST /api/tokens expiresIn 60: " + statusOf(r) + " " + string(r.Body)
		return x
	}
	m := r.Map(t)
	x.secret, _ = m["token"].(string)
	if at, err := time.Parse(time.RFC3339, anyString(m["expiresAt"])); err != nil || at.Sub(x.created) < 55*time.Second || at.Sub(x.created) > 65*time.Second {
		x.problem = "expiresAt " + anyString(m["expiresAt"]) + ", want a minute from " + x.created.UTC().Format(time.RFC3339)
		return x
	}
	if r := s.Get(t, "/api/apps", x.secret); r.Status != http.StatusOK {
		x.problem = "the fresh minute token: " + statusOf(r) + " " + string(r.Body)
	}
	return x
}

func (x *expiringToken) check(t *testing.T, s *harness.Stack) {
	if x.problem != "" {
		t.Fatal(x.problem)
	}
	if wait := time.Until(x.created.Add(61 * time.Second)); wait > 0 {
		t.Logf("waiting %s for the token's minute", wait.Round(time.Second))
		time.Sleep(wait)
	}
	for _, path := range []string{"/api/apps", "/api/account", "/api/teams"} {
		expectCode(t, "expired token GET "+path, s.Get(t, path, x.secret), http.StatusUnauthorized, codeTokenExpired)
	}
}

func expiresNear(t *testing.T, v any, d time.Duration) {
	t.Helper()
	at, err := time.Parse(time.RFC3339, anyString(v))
	if err != nil {
		t.Fatalf("expiresAt %v", v)
	}
	if off := time.Until(at) - d; off < -time.Minute || off > time.Minute {
		t.Fatalf("expiresAt %v, want about %s from now", v, d)
	}
}

func statusOf(r *harness.Response) string { return strconv.Itoa(r.Status) }

func anyString(v any) string { s, _ := v.(string); return s }

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		out = append(out, anyString(x))
	}
	return out
}
