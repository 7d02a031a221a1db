package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// Codes of issue #39 that contract/access does not name (it holds only the gate's refusals);
// identity and the gateway answer these.
const (
	codeTeamNotEmpty      = "team_not_empty"
	codePersonalTeam      = "personal_team"
	codeLastOwner         = "last_owner"
	codeTeamLimit         = "team_limit_reached"
	codeEmailMismatch     = "invitation_email_mismatch"
	codeInvalidToken      = "invalid_token"
	codeTokenExpired      = "token_expired"
	auditOutcomeDenied    = "denied"
	auditOutcomeSuccess   = "success"
	auditActorUser        = "user"
	maskedSuffix          = "********"
	invitationLinkPattern = `/invitations/accept\?token=([^\s"'<>&]+)`
)

// accessError is the contract's error body with the members #39 adds.
type accessError struct {
	Error         string `json:"error"`
	Code          string `json:"code"`
	Message       string `json:"message"`
	RequiredRole  string `json:"requiredRole"`
	RequiredScope string `json:"requiredScope"`
	Field         string `json:"field"`
	Limit         *int64 `json:"limit"`
	Plan          string `json:"plan"`
}

// expectCode checks status and the machine-readable code. Every #39 condition is a code
// (httperror.New sets `error` to it too), so both members must name it.
func expectCode(t testing.TB, what string, r *harness.Response, status int, code string) accessError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d %s: %s", what, r.Status, status, code, r.Body)
	}
	var e accessError
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%s: error body is not JSON: %s", what, r.Body)
	}
	if e.Code != code || e.Error != code {
		t.Fatalf("%s: error %q code %q, want %q: %s", what, e.Error, e.Code, code, r.Body)
	}
	return e
}

// expectStatus checks only the status.
func expectStatus(t testing.TB, what string, r *harness.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
}

func call(s *harness.Stack, t testing.TB, method, path, token string, body any) *harness.Response {
	t.Helper()
	return s.Do(t, harness.Request{Method: method, Path: path, Token: token, Body: body})
}

// teamJSON is a Team as the API answers it.
type teamJSON struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	Name      string `json:"name"`
	Plan      string `json:"plan"`
	Personal  bool   `json:"personal"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
}

func listTeams(t testing.TB, s *harness.Stack, token string) []teamJSON {
	t.Helper()
	r := s.Get(t, "/api/teams", token)
	expectStatus(t, "GET /api/teams", r, http.StatusOK)
	var list []teamJSON
	r.JSON(t, &list)
	return list
}

// personalTeam is the caller's personal team, which every account has from its first sign-in.
func personalTeam(t testing.TB, s *harness.Stack, token string) teamJSON {
	t.Helper()
	var found []teamJSON
	for _, tm := range listTeams(t, s, token) {
		if tm.Personal {
			found = append(found, tm)
		}
	}
	if len(found) != 1 {
		t.Fatalf("personal teams listed: %+v, want exactly one", found)
	}
	return found[0]
}

// createTeam makes a team the caller owns and checks the Team's shape.
func createTeam(t testing.TB, s *harness.Stack, token, name string) teamJSON {
	t.Helper()
	r := post(s, t, "/api/teams", token, map[string]string{"name": name})
	expectStatus(t, "POST /api/teams", r, http.StatusCreated)
	if got, want := strings.Join(keysOf(r.Map(t)), ","), "createdAt,id,name,personal,plan,role,slug"; got != want {
		t.Fatalf("Team has keys %s, want %s", got, want)
	}
	var tm teamJSON
	r.JSON(t, &tm)
	if tm.Name != name || tm.Personal || tm.Role != "owner" || tm.Plan != "nestling" || tm.ID == "" ||
		!regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`).MatchString(tm.Slug) {
		t.Fatalf("new team %s", r.Body)
	}
	if _, err := time.Parse(time.RFC3339, tm.CreatedAt); err != nil {
		t.Fatalf("team createdAt %q", tm.CreatedAt)
	}
	return tm
}

// createTeamApp makes an app named name in team (the personal team when team is "").
func createTeamApp(t testing.TB, s *harness.Stack, token, team, name, kind string) map[string]any {
	t.Helper()
	body := map[string]any{"name": name, "kind": kind}
	if team != "" {
		body["team"] = team
	}
	r := post(s, t, "/api/apps", token, body)
	expectStatus(t, "POST /api/apps in "+team, r, http.StatusCreated)
	app := r.Map(t)
	if app["slug"] != name || (team != "" && app["team"] != team) {
		t.Fatalf("new app in team %q: %s", team, r.Body)
	}
	return app
}

var invitationLink = regexp.MustCompile(invitationLinkPattern)

// invite invites email into team with role and returns the invitation and the token its
// mailed link carries.
func invite(t testing.TB, s *harness.Stack, token, team, email, role string) (map[string]any, string) {
	t.Helper()
	before := s.SMTP.Count(email)
	r := post(s, t, "/api/teams/"+team+"/invitations", token, map[string]string{"email": email, "role": role})
	expectStatus(t, "invite "+email, r, http.StatusCreated)
	inv := r.Map(t)
	if inv["email"] != email || inv["role"] != role || inv["id"] == nil {
		t.Fatalf("invitation %s", r.Body)
	}
	m, ok := s.SMTP.WaitFor(email, before, 10*time.Second)
	if !ok {
		t.Fatalf("no invitation mail reached %s", email)
	}
	data := strings.ReplaceAll(m.Data, "=\r\n", "")
	match := invitationLink.FindStringSubmatch(data)
	if match == nil {
		t.Fatalf("no invitation link in mail: %q", m.Data)
	}
	if !strings.Contains(data, s.Env["CONSOLE_URL"]+"/invitations/accept?token=") {
		t.Fatalf("the invitation link does not point at the console (%s): %q", s.Env["CONSOLE_URL"], m.Data)
	}
	code, err := url.QueryUnescape(match[1])
	if err != nil {
		t.Fatalf("invitation token %q: %v", match[1], err)
	}
	return inv, code
}

// accept accepts an invitation with a session and returns the joined Team.
func accept(t testing.TB, s *harness.Stack, session, code string) teamJSON {
	t.Helper()
	r := post(s, t, "/api/invitations/accept", session, map[string]string{"token": code})
	expectStatus(t, "accept invitation", r, http.StatusOK)
	var tm teamJSON
	r.JSON(t, &tm)
	return tm
}

// joinTeam signs in a new person and makes them a member of team with role, by invitation.
func joinTeam(t testing.TB, s *harness.Stack, ownerToken, team, role, prefix string) harness.Account {
	t.Helper()
	email := harness.Email(prefix)
	_, code := invite(t, s, ownerToken, team, email, role)
	who := s.SignIn(t, email)
	if got := accept(t, s, who.Token, code); got.Slug != team || got.Role != role {
		t.Fatalf("joined %+v, want %s as %s", got, team, role)
	}
	return who
}

// createToken makes an API token with body and returns the created token's JSON.
func createToken(t testing.TB, s *harness.Stack, token string, body map[string]any) map[string]any {
	t.Helper()
	r := post(s, t, "/api/tokens", token, body)
	expectStatus(t, "POST /api/tokens", r, http.StatusCreated)
	m := r.Map(t)
	if sec, _ := m["token"].(string); sec == "" {
		t.Fatalf("created token without its secret: %s", r.Body)
	}
	return m
}

// auditEntry is one entry of GET /api/teams/{team}/audit.
type auditEntry struct {
	ID    string `json:"id"`
	At    string `json:"at"`
	Actor struct {
		Type    string `json:"type"`
		UserID  string `json:"userId"`
		Email   string `json:"email"`
		TokenID string `json:"tokenId"`
	} `json:"actor"`
	Action   string         `json:"action"`
	Target   string         `json:"target"`
	App      string         `json:"app"`
	IP       string         `json:"ip"`
	Outcome  string         `json:"outcome"`
	Metadata map[string]any `json:"metadata"`
}

type auditPage struct {
	Entries    []auditEntry `json:"entries"`
	NextCursor *string      `json:"nextCursor"`
}

// audit reads one page of team's audit log with query (may be nil).
func audit(t testing.TB, s *harness.Stack, token, team string, query url.Values) (auditPage, *harness.Response) {
	t.Helper()
	path := "/api/teams/" + team + "/audit"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	r := s.Get(t, path, token)
	expectStatus(t, "GET "+path, r, http.StatusOK)
	var p auditPage
	r.JSON(t, &p)
	return p, r
}

// waitAudit polls team's audit log (every 200 ms: far under the read limit) until an entry
// matches, and returns it with the page's raw body.
func waitAudit(t testing.TB, s *harness.Stack, token, team string, within time.Duration, what string, match func(auditEntry) bool) (auditEntry, []byte) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p, r := audit(t, s, token, team, url.Values{"limit": {"200"}})
		for _, e := range p.Entries {
			if match(e) {
				return e, r.Body
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit entry for %s within %s; the log: %s", what, within, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// within polls check every 100 ms and fails once limit has passed since start: the
// one-second promises (role changes, removals) are measured from the answer that made them.
func within(t testing.TB, start time.Time, limit time.Duration, what string, check func() bool) {
	t.Helper()
	for !check() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}

// appSlugs are the slugs of GET /api/apps[?query] as token.
func appSlugs(t testing.TB, s *harness.Stack, token, query string) ([]string, []map[string]any) {
	t.Helper()
	path := "/api/apps"
	if query != "" {
		path += "?" + query
	}
	r := s.Get(t, path, token)
	expectStatus(t, "GET "+path, r, http.StatusOK)
	var list []map[string]any
	r.JSON(t, &list)
	var slugs []string
	for _, a := range list {
		slugs = append(slugs, a["slug"].(string))
	}
	return slugs, list
}

// notFoundBody is what a 404 says: an object the caller may not see answers exactly as one
// that does not exist.
func notFoundBody(t testing.TB, r *harness.Response) accessError {
	t.Helper()
	var e accessError
	json.Unmarshal(r.Body, &e)
	return e
}
