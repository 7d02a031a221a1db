package httpapi_test

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// auditRow is one entry of a team's audit log, as the tests look at it.
type auditRow struct {
	action, outcome, email, target string
	meta                           map[string]string
}

// audit lists teamID's audit log in the order it was written (the gate stamps entries by the
// wall clock, the use cases by the harness's, so "at" does not order them here).
func (h *harness) audit(teamID string) []auditRow {
	h.t.Helper()
	rows, err := h.pool.Query(context.Background(), `SELECT action, outcome, email, target, metadata
		FROM audit_entries WHERE team_id = $1 ORDER BY xmin::text::bigint`, teamID)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.action, &r.outcome, &r.email, &r.target, &r.meta); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// lastAudit is teamID's newest entry.
func (h *harness) lastAudit(teamID string) auditRow {
	h.t.Helper()
	l := h.audit(teamID)
	if len(l) == 0 {
		h.t.Fatal("no audit entries")
	}
	return l[len(l)-1]
}

// setPlan stores identity's copy of teamID's plan, as billing's plan_changed would.
func (h *harness) setPlan(teamID, name string, members int64, version int64) {
	h.t.Helper()
	err := h.store.InTx(context.Background(), func(tx usecase.Repo) error {
		_, err := usecase.ApplyPlanChange(context.Background(), tx, teamID, account.Plan{Name: name,
			Limits: account.Limits{Members: members}, Version: version, UpdatedAt: h.clock.Now()})
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

var inviteLink = regexp.MustCompile(`/invitations/accept\?token=([A-Za-z0-9_%-]+)`)

// invite invites email into team as role and returns the link's code from the mail.
func (h *harness) invite(caller *callerid.Caller, team, email, role string) string {
	h.t.Helper()
	h.expect(h.do("POST", "/api/teams/"+team+"/invitations", map[string]string{"email": email, "role": role}, caller), 201, "")
	msg := h.mailer.last(h.t)
	if msg.To != email || !strings.Contains(msg.Text, consoleURL+"/invitations/accept?token=") {
		h.t.Fatalf("invitation mail %+v", msg)
	}
	m := inviteLink.FindStringSubmatch(msg.Text)
	code, _ := url.QueryUnescape(m[1])
	return code
}

// refresh is the caller a gateway would sign once membership.changed evicted its copy.
func (h *harness) refresh(token string) *callerid.Caller { return h.callerOf(token) }

func countKey(keys []string, key string) int {
	n := 0
	for _, k := range keys {
		if k == key {
			n++
		}
	}
	return n
}

func TestTeamsLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	adaTok, ada := h.signIn("ada.lovelace@example.com")
	_, bob := h.signIn("bob@example.com")

	// Every account has its personal team: the account's id, named after its person.
	l := h.do("GET", "/api/teams", nil, ada).list(t)
	if len(l) != 1 || keys(l[0]) != "createdAt,id,name,personal,plan,role,slug" || l[0]["id"] != ada.AccountID ||
		l[0]["personal"] != true || l[0]["role"] != "owner" || l[0]["plan"] != "nestling" ||
		l[0]["slug"] != "ada-lovelace" || l[0]["name"] != "ada.lovelace" {
		t.Fatalf("teams %v", l)
	}

	for _, name := range []string{"", "  ", strings.Repeat("x", 101), "a\nb"} {
		h.expect(h.do("POST", "/api/teams", map[string]string{"name": name}, ada), 400, "invalid_name")
	}
	h.expect(h.do("POST", "/api/teams", map[string]string{"name": "Acme", "slug": "Not A Slug"}, ada), 400, "invalid_slug")
	h.expect(h.do("POST", "/api/teams", map[string]string{"name": "Acme", "slug": "ada-lovelace"}, ada), 409, "slug_taken")
	h.expect(h.raw("POST", "/api/teams", []byte(`{"name":`), ada), 400, "invalid_body")

	before := len(h.events())
	r := h.do("POST", "/api/teams", map[string]string{"name": "  Acme Inc. "}, ada)
	h.expect(r, 201, "")
	acme := r.json(t)
	if keys(acme) != "createdAt,id,name,personal,plan,role,slug" || acme["slug"] != "acme-inc" || acme["name"] != "Acme Inc." ||
		acme["personal"] != false || acme["role"] != "owner" || acme["plan"] != "nestling" || acme["id"] == ada.AccountID {
		t.Fatalf("created %v", acme)
	}
	acmeID := acme["id"].(string)
	if got := h.events()[before:]; !slices.Equal(got, []string{"identity.team.created", "identity.membership.changed"}) {
		t.Fatalf("events %v", got)
	}
	var created identityv1.TeamCreated
	h.lastEvent("identity.team.created", &created)
	if created.TeamId != acmeID || created.Personal || created.OwnerAccountId != ada.AccountID || created.Slug != "acme-inc" {
		t.Fatalf("team.created %v", &created)
	}
	if e := h.lastAudit(acmeID); e.action != "team.create" || e.outcome != "success" || e.email != "ada.lovelace@example.com" {
		t.Fatalf("audit %+v", e)
	}

	// One free team besides the personal one.
	lim := h.expect(h.do("POST", "/api/teams", map[string]string{"name": "Second"}, ada), 403, "team_limit_reached")
	if lim["limit"] != float64(1) || lim["plan"] != "nestling" || lim["code"] != "team_limit_reached" {
		t.Fatalf("limit body %v", lim)
	}
	// A team on a paid plan no longer counts.
	h.setPlan(acmeID, "songbird", 10, 1)
	r = h.do("POST", "/api/teams", map[string]string{"name": "Acme Inc"}, ada)
	h.expect(r, 201, "")
	if s := r.json(t)["slug"].(string); !strings.HasPrefix(s, "acme-inc-") || len(s) != len("acme-inc-")+6 {
		t.Fatalf("a taken derived slug gets a suffix: %q", s)
	}

	ada = h.refresh(adaTok)
	l = h.do("GET", "/api/teams", nil, ada).list(t)
	if len(l) != 3 || l[0]["personal"] != true {
		t.Fatalf("teams %v", l)
	}
	g := h.do("GET", "/api/teams/acme-inc", nil, ada)
	h.expect(g, 200, "")
	if m := g.json(t); m["plan"] != "songbird" || m["id"] != acmeID {
		t.Fatalf("get %v", m)
	}
	// A stranger gets 404 for everything of the team, and it writes nothing in its log.
	entries := len(h.audit(acmeID))
	for _, rq := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"GET", "/members"}, {"GET", "/invitations"}} {
		h.expect(h.do(rq[0], "/api/teams/acme-inc"+rq[1], map[string]string{"name": "x"}, bob), 404, "not found")
	}
	h.expect(h.do("GET", "/api/teams/nope", nil, ada), 404, "not found")
	if len(h.audit(acmeID)) != entries {
		t.Fatal("a stranger's 404 was logged in the team's audit log")
	}

	r = h.do("PATCH", "/api/teams/acme-inc", map[string]string{"name": "Acme Industries"}, ada)
	h.expect(r, 200, "")
	if m := r.json(t); m["name"] != "Acme Industries" || m["slug"] != "acme-inc" {
		t.Fatalf("renamed %v", m)
	}
	h.expect(h.do("PATCH", "/api/teams/acme-inc", map[string]string{"name": ""}, ada), 400, "invalid_name")
	if e := h.lastAudit(acmeID); e.action != "team.update" || e.outcome != "success" || e.target != "teams/acme-inc" {
		t.Fatalf("audit %+v", e)
	}

	// The personal team cannot be deleted; a team with apps neither.
	h.expect(h.do("DELETE", "/api/teams/ada-lovelace", nil, ada), 409, "personal_team")
	appID := uuid.NewString()
	inTx(t, h, func(tx usecase.Repo) error {
		return usecase.ApplyAppCreated(context.Background(), tx, appID, acmeID, "site")
	})
	h.expect(h.do("DELETE", "/api/teams/acme-inc", nil, ada), 409, "team_not_empty")
	inTx(t, h, func(tx usecase.Repo) error { return usecase.ApplyAppDeleted(context.Background(), tx, appID) })

	before = len(h.events())
	h.expect(h.do("DELETE", "/api/teams/acme-inc", nil, ada), 204, "")
	got := h.events()[before:]
	if countKey(got, "identity.team.deleted") != 1 || countKey(got, "identity.membership.changed") != 1 {
		t.Fatalf("events %v", got)
	}
	var deleted identityv1.TeamDeleted
	h.lastEvent("identity.team.deleted", &deleted)
	if deleted.TeamId != acmeID {
		t.Fatalf("team.deleted %v", &deleted)
	}
	if e := h.lastAudit(acmeID); e.action != "team.delete" || e.outcome != "success" {
		t.Fatalf("audit %+v", e)
	}
	// The gateway's copy may still name it for a moment; identity does not.
	h.expect(h.do("GET", "/api/teams/acme-inc", nil, ada), 404, "not found")
	if l := h.do("GET", "/api/teams", nil, h.refresh(adaTok)).list(t); len(l) != 2 {
		t.Fatalf("teams after delete %v", l)
	}
}

func inTx(t *testing.T, h *harness, fn func(tx usecase.Repo) error) {
	t.Helper()
	if err := h.store.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// acmeTeam signs ada in and makes her team acme; it returns her session token.
func acmeTeam(t *testing.T, h *harness) (string, *callerid.Caller, string) {
	t.Helper()
	tok, ada := h.signIn("ada@example.com")
	r := h.do("POST", "/api/teams", map[string]string{"name": "Acme", "slug": "acme"}, ada)
	h.expect(r, 201, "")
	return tok, h.refresh(tok), r.json(t)["id"].(string)
}

// join invites email as role and accepts with a fresh sign-in; it returns the member's token
// and caller as the gateway would sign them afterwards.
func join(t *testing.T, h *harness, by *callerid.Caller, email, role string) (string, *callerid.Caller) {
	t.Helper()
	code := h.invite(by, "acme", email, role)
	tok, c := h.signIn(email)
	r := h.do("POST", "/api/invitations/accept", map[string]string{"token": code}, c)
	h.expect(r, 200, "")
	if m := r.json(t); m["slug"] != "acme" || m["role"] != role || keys(m) != "createdAt,id,name,personal,plan,role,slug" {
		t.Fatalf("accepted %v", m)
	}
	return tok, h.refresh(tok)
}

func TestMembersAndRoles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setPlan(uuid.NewString(), "nestling", 3, 1) // another team's copy changes nothing here
	_, ada, acmeID := acmeTeam(t, h)

	before := len(h.events())
	bobTok, bob := join(t, h, ada, "bob@example.com", "developer")
	var changed identityv1.MembershipChanged
	h.lastEvent("identity.membership.changed", &changed)
	if changed.TeamId != acmeID || changed.UserId != bob.UserID || changed.AccountId != bob.AccountID || changed.Role != "developer" ||
		countKey(h.events()[before:], "identity.membership.changed") != 1 {
		t.Fatalf("membership.changed %v", &changed)
	}
	if e := h.lastAudit(acmeID); e.action != "member.join" || e.email != "bob@example.com" || e.meta["role"] != "developer" {
		t.Fatalf("audit %+v", e)
	}
	ms := h.do("GET", "/api/teams/acme/members", nil, bob).list(t)
	if len(ms) != 2 || keys(ms[0]) != "email,joinedAt,name,role,userId" || ms[0]["userId"] != ada.UserID || ms[0]["role"] != "owner" ||
		ms[1]["email"] != "bob@example.com" || ms[1]["role"] != "developer" {
		t.Fatalf("members %v", ms)
	}

	// A developer may not change roles: the gate refuses, naming the role, and logs it.
	carolTok, carol := join(t, h, ada, "carol@example.com", "viewer")
	d := h.expect(h.do("PATCH", "/api/teams/acme/members/"+carol.UserID, map[string]string{"role": "admin"}, bob), 403, "insufficient_role")
	if d["requiredRole"] != "admin" || d["code"] != "insufficient_role" {
		t.Fatalf("refusal %v", d)
	}
	if e := h.lastAudit(acmeID); e.action != "member.update" || e.outcome != "denied" || e.email != "bob@example.com" {
		t.Fatalf("audit %+v", e)
	}
	// Nor invite or see invitations.
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "x@example.com", "role": "viewer"}, bob), 403, "insufficient_role")
	h.expect(h.do("GET", "/api/teams/acme/invitations", nil, bob), 403, "insufficient_role")

	// The owner makes bob an admin.
	r := h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "admin"}, ada)
	h.expect(r, 200, "")
	if m := r.json(t); m["role"] != "admin" || m["userId"] != bob.UserID {
		t.Fatalf("changed %v", m)
	}
	h.lastEvent("identity.membership.changed", &changed)
	if changed.UserId != bob.UserID || changed.Role != "admin" {
		t.Fatalf("membership.changed %v", &changed)
	}
	if e := h.lastAudit(acmeID); e.action != "member.update" || e.outcome != "success" || e.meta["role"] != "admin" {
		t.Fatalf("audit %+v", e)
	}
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "chief"}, ada), 400, "invalid_parameter")
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+uuid.NewString(), map[string]string{"role": "viewer"}, ada), 404, "not found")
	h.expect(h.do("PATCH", "/api/teams/acme/members/not-a-uuid", map[string]string{"role": "viewer"}, ada), 404, "not found")
	bob = h.refresh(bobTok)

	// An admin manages members below owner, but not owners, and grants no ownership: the use
	// case refuses (it needs the target's role) and the refusal is logged like the gate's.
	d = h.expect(h.do("PATCH", "/api/teams/acme/members/"+ada.UserID, map[string]string{"role": "viewer"}, bob), 403, "insufficient_role")
	if d["requiredRole"] != "owner" {
		t.Fatalf("refusal %v", d)
	}
	if e := h.lastAudit(acmeID); e.action != "member.update" || e.outcome != "denied" || e.meta["code"] != "insufficient_role" ||
		e.meta["required"] != "owner" || e.email != "bob@example.com" {
		t.Fatalf("audit %+v", e)
	}
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+carol.UserID, map[string]string{"role": "owner"}, bob), 403, "insufficient_role")
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "owner"}, bob), 403, "insufficient_role")
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+ada.UserID, nil, bob), 403, "insufficient_role")
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "o@example.com", "role": "owner"}, bob), 403, "insufficient_role")
	if e := h.lastAudit(acmeID); e.action != "invitation.create" || e.outcome != "denied" || e.meta["email"] != "o@example.com" {
		t.Fatalf("audit %+v", e)
	}
	r = h.do("PATCH", "/api/teams/acme/members/"+carol.UserID, map[string]string{"role": "developer"}, bob)
	h.expect(r, 200, "")
	// A viewer may not remove others.
	carol = h.refresh(carolTok)
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+bob.UserID, nil, carol), 403, "insufficient_role")

	// The last owner can be neither demoted nor removed, and cannot leave.
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+ada.UserID, map[string]string{"role": "admin"}, ada), 409, "last_owner")
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+ada.UserID, nil, ada), 409, "last_owner")
	// With a second owner, she can.
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "owner"}, ada), 200, "")
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+ada.UserID, map[string]string{"role": "admin"}, ada), 200, "")
	bob = h.refresh(bobTok)
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "viewer"}, bob), 409, "last_owner")
	// A change goes by the role read in its transaction: ada's caller, signed before she
	// stepped down, still says owner, and passes the gate, but not the use case.
	d = h.expect(h.do("DELETE", "/api/teams/acme", nil, ada), 403, "insufficient_role")
	if e := h.lastAudit(acmeID); d["requiredRole"] != "owner" || e.action != "team.delete" || e.outcome != "denied" {
		t.Fatalf("refusal %v, audit %+v", d, e)
	}

	// Removal revokes the member's tokens for this team (and only those) at once.
	teamTok := h.teamToken(carol, acmeID)
	otherTok := h.teamToken(carol, carol.AccountID)
	before = len(h.events())
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+carol.UserID, nil, bob), 204, "")
	got := h.events()[before:]
	if !slices.Equal(got, []string{"identity.token.revoked", "identity.membership.changed"}) {
		t.Fatalf("events %v", got)
	}
	var revoked identityv1.TokenRevoked
	h.lastEvent("identity.token.revoked", &revoked)
	if revoked.TokenId != teamTok || revoked.AccountId != carol.AccountID {
		t.Fatalf("token.revoked %v", &revoked)
	}
	h.lastEvent("identity.membership.changed", &changed)
	if changed.UserId != carol.UserID || changed.Role != "" {
		t.Fatalf("membership.changed %v", &changed)
	}
	if !h.tokenRevoked(teamTok) || h.tokenRevoked(otherTok) {
		t.Fatal("removal revoked the wrong tokens")
	}
	h.expect(h.do("GET", "/api/teams/acme", nil, carol), 404, "not found")
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+carol.UserID, nil, bob), 404, "not found")
	if l := h.do("GET", "/api/teams", nil, h.refresh(carolTok)).list(t); len(l) != 1 {
		t.Fatalf("carol's teams %v", l)
	}

	// Anyone may leave.
	_, dave := join(t, h, bob, "dave@example.com", "viewer")
	h.expect(h.do("DELETE", "/api/teams/acme/members/"+dave.UserID, nil, dave), 204, "")
	if e := h.lastAudit(acmeID); e.action != "member.remove" || e.outcome != "success" || e.meta["left"] != "true" {
		t.Fatalf("audit %+v", e)
	}
}

// teamToken stores an API token of c's scoped to teamID (the scoped-token routes are
// another part's; removal must revoke what they make) and returns its id.
func (h *harness) teamToken(c *callerid.Caller, teamID string) string {
	h.t.Helper()
	tok, _ := auth.NewAPIToken(c.AccountID, c.UserID, "ci", h.clock.Now())
	_, err := h.pool.Exec(context.Background(), `INSERT INTO api_tokens
		(id, token_hash, account_id, user_id, name, prefix, created_at, team_id, scope, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'deploy', $9)`,
		tok.ID, tok.Hash, tok.AccountID, tok.UserID, tok.Name, tok.Prefix, tok.CreatedAt, teamID, tok.CreatedAt.Add(time.Hour))
	if err != nil {
		h.t.Fatal(err)
	}
	return tok.ID
}

func (h *harness) tokenRevoked(id string) bool {
	h.t.Helper()
	var revoked bool
	if err := h.pool.QueryRow(context.Background(), `SELECT revoked_at IS NOT NULL FROM api_tokens WHERE id = $1`, id).Scan(&revoked); err != nil {
		h.t.Fatal(err)
	}
	return revoked
}

func TestInvitations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	adaTok, ada, acmeID := acmeTeam(t, h)

	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "nope", "role": "viewer"}, ada), 400, "invalid_email")
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "bob@example.com", "role": "boss"}, ada), 400, "invalid_parameter")
	// The personal team is not shared.
	personal := h.do("GET", "/api/teams", nil, ada).list(t)[0]["slug"].(string)
	h.expect(h.do("POST", "/api/teams/"+personal+"/invitations", map[string]string{"email": "bob@example.com", "role": "viewer"}, ada), 409, "personal_team")

	r := h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "Bob@Example.com", "role": "developer"}, ada)
	h.expect(r, 201, "")
	inv := r.json(t)
	if keys(inv) != "createdAt,email,expiresAt,id,role" || inv["email"] != "bob@example.com" || inv["role"] != "developer" ||
		inv["expiresAt"] != h.clock.Now().Add(7*24*time.Hour).Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("invitation %v", inv)
	}
	code := inviteLink.FindStringSubmatch(h.mailer.last(t).Text)[1]
	if e := h.lastAudit(acmeID); e.action != "invitation.create" || e.outcome != "success" || e.meta["email"] != "bob@example.com" ||
		e.meta["role"] != "developer" || strings.Contains(e.target+strings.Join(slices.Collect(mapValues(e.meta)), ","), code) {
		t.Fatalf("audit %+v", e)
	}
	var stored int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM invitations WHERE code_hash = sha256($1::bytea)`, []byte(code)).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("the code is kept only as its hash: %d %v", stored, err)
	}

	// Members and pending invitations count toward nestling's three.
	h.invite(ada, "acme", "carol@example.com", "viewer")
	lim := h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "dave@example.com", "role": "viewer"}, ada), 403, "member_limit_reached")
	if lim["limit"] != float64(3) || lim["plan"] != "nestling" {
		t.Fatalf("limit %v", lim)
	}
	// Inviting the same address again replaces its invitation (and still fits).
	h.invite(ada, "acme", "carol@example.com", "developer")
	l := h.do("GET", "/api/teams/acme/invitations", nil, ada).list(t)
	if len(l) != 2 || keys(l[0]) != "createdAt,email,expiresAt,id,invitedBy,role" || l[0]["invitedBy"] != ada.UserID || l[1]["role"] != "developer" {
		t.Fatalf("invitations %v", l)
	}
	// Withdrawing one frees its place.
	h.expect(h.do("DELETE", "/api/teams/acme/invitations/"+l[1]["id"].(string), nil, ada), 204, "")
	h.expect(h.do("DELETE", "/api/teams/acme/invitations/"+l[1]["id"].(string), nil, ada), 404, "not found")
	h.expect(h.do("DELETE", "/api/teams/acme/invitations/nope", nil, ada), 404, "not found")
	daveCode := h.invite(ada, "acme", "dave@example.com", "viewer")
	// A plan with more members lifts the limit once billing's copy arrives.
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "eve@example.com", "role": "viewer"}, ada), 403, "member_limit_reached")
	h.setPlan(acmeID, "songbird", 10, 1)
	eveCode := h.invite(ada, "acme", "eve@example.com", "viewer")

	// Accepting: with a session of the invited address, once, within seven days.
	bobCode, _ := url.QueryUnescape(code)
	_, mallory := h.signIn("mallory@example.com")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": bobCode}, mallory), 403, "invitation_email_mismatch")
	bobTok, bob := h.signIn("bob@example.com")
	apiTok := h.do("POST", "/api/tokens", map[string]string{"name": "cli"}, bob).json(t)["token"].(string)
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": bobCode}, h.callerOf(apiTok)), 403, "session_required")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": "unknown"}, bob), 400, "invalid_token")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{}, bob), 400, "invalid_token")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": bobCode}, bob), 200, "")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": bobCode}, bob), 400, "invalid_token")
	bob = h.refresh(bobTok)
	if l := h.do("GET", "/api/teams", nil, bob).list(t); len(l) != 2 || l[1]["slug"] != "acme" || l[1]["role"] != "developer" {
		t.Fatalf("bob's teams %v", l)
	}
	// A member is not invited again.
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "bob@example.com", "role": "viewer"}, ada), 409, "already_member")

	// A withdrawn invitation's link is dead; an old one has expired.
	_, carol := h.signIn("carol@example.com")
	carolCode := h.invite(ada, "acme", "carol@example.com", "viewer")
	l = h.do("GET", "/api/teams/acme/invitations", nil, ada).list(t)
	for _, i := range l {
		if i["email"] == "carol@example.com" {
			h.expect(h.do("DELETE", "/api/teams/acme/invitations/"+i["id"].(string), nil, ada), 204, "")
		}
	}
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": carolCode}, carol), 400, "invalid_token")
	h.clock.Advance(7*24*time.Hour - time.Second)
	_, eve := h.signIn("eve@example.com")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": eveCode}, eve), 200, "")
	h.clock.Advance(time.Hour)
	_, dave := h.signIn("dave@example.com")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": daveCode}, dave), 410, "invitation_expired")
	if l := h.do("GET", "/api/teams/acme/invitations", nil, h.refresh(adaTok)).list(t); len(l) != 0 {
		t.Fatalf("expired invitations are not pending: %v", l)
	}

	// A mail that cannot be sent is 503; inviting again sends a fresh link.
	h.mailer.refuse()
	h.expect(h.do("POST", "/api/teams/acme/invitations", map[string]string{"email": "frank@example.com", "role": "viewer"}, ada), 503, "mail_unavailable")
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// Introspection gives the gateway every membership of the person, for a session and for a
// full API token, with the current role.
func TestIntrospectionListsTeams(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada, acmeID := acmeTeam(t, h)
	bobTok, bob := join(t, h, ada, "bob@example.com", "viewer")
	apiTok := h.do("POST", "/api/tokens", map[string]string{"name": "cli"}, bob).json(t)["token"].(string)
	h.expect(h.do("PATCH", "/api/teams/acme/members/"+bob.UserID, map[string]string{"role": "developer"}, ada), 200, "")

	for _, tok := range []string{bobTok, apiTok} {
		m := h.do("POST", "/internal/introspect", map[string]string{"token": tok}, anonymous).json(t)
		teams := m["teams"].([]any)
		if len(teams) != 2 {
			t.Fatalf("teams %v", teams)
		}
		personal, acme := teams[0].(map[string]any), teams[1].(map[string]any)
		if keys(personal) != "id,personal,role,slug" || personal["id"] != bob.AccountID || personal["personal"] != true ||
			personal["role"] != "owner" || personal["slug"] != "bob" {
			t.Fatalf("personal %v", personal)
		}
		if acme["id"] != acmeID || acme["slug"] != "acme" || acme["role"] != "developer" || acme["personal"] != false {
			t.Fatalf("acme %v", acme)
		}
	}
}

// A scoped token (as the gateway signs it: its one team, its scope) sees only its team and
// changes nothing its scope does not cover.
func TestScopedTokensOnTeamRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada, acmeID := acmeTeam(t, h)
	scoped := *ada
	scoped.TokenKind, scoped.TokenID = callerid.KindAPI, uuid.NewString()
	scoped.Scope = "write"
	scoped.Teams = callerid.EncodeTeams([]access.Membership{{TeamID: acmeID, Slug: "acme", Role: access.Owner}})

	if l := h.do("GET", "/api/teams", nil, &scoped).list(t); len(l) != 1 || l[0]["id"] != acmeID {
		t.Fatalf("a scoped token's teams %v", l)
	}
	d := h.expect(h.do("PATCH", "/api/teams/acme", map[string]string{"name": "X"}, &scoped), 403, "insufficient_scope")
	if d["requiredScope"] != "admin" {
		t.Fatalf("refusal %v", d)
	}
	if e := h.lastAudit(acmeID); e.action != "team.update" || e.outcome != "denied" || e.meta["code"] != "insufficient_scope" {
		t.Fatalf("audit %+v", e)
	}
	h.expect(h.do("POST", "/api/teams", map[string]string{"name": "Other"}, &scoped), 403, "insufficient_scope")
	h.expect(h.do("POST", "/api/invitations/accept", map[string]string{"token": "x"}, &scoped), 403, "session_required")
	// Its personal team is not its team: 404, as for a stranger.
	personal := h.do("GET", "/api/teams", nil, ada).list(t)[0]["slug"].(string)
	h.expect(h.do("GET", "/api/teams/"+personal, nil, &scoped), 404, "not found")
	h.expect(h.do("GET", "/api/teams/acme", nil, &scoped), 200, "")
}
