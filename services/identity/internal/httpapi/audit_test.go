package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	"tori.dev/services/identity/internal/usecase"
)

// record puts e in the log as the audit consumer does.
func (h *harness) record(e *auditv1.EntryRecorded) {
	h.t.Helper()
	if err := h.store.InTx(context.Background(), func(tx usecase.Repo) error { return tx.RecordAudit(context.Background(), e) }); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) retention(teamID string, days int) {
	h.t.Helper()
	_, err := h.pool.Exec(context.Background(), `INSERT INTO account_plans (account_id, plan, max_custom_domains, database_connections,
		database_bytes, version, updated_at, audit_retention_days) VALUES ($1, 'songbird', 5, 20, 1, 1, now(), $2)`, teamID, days)
	if err != nil {
		h.t.Fatal(err)
	}
}

func TestAuditLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	_, bob := h.signIn("bob@example.com")
	_, dan := h.signIn("dan@example.com")
	acme := h.team("acme", ada, false, "web", "api")
	h.member(acme, bob, "developer")
	h.team("dan-co", dan, false)
	now := h.clock.Now()
	tokenID := uuid.NewString()

	// Seven entries a minute apart, the newest two at the same moment (the cursor's tie), and
	// one past nestling's seven days that the prune has not reached yet.
	var ids []string // newest first, as the log reads
	for i := range 7 {
		at := now.Add(-time.Duration(max(i, 1)) * time.Minute)
		e := &auditv1.EntryRecorded{EntryId: uuid.Must(uuid.NewV7()).String(), TeamId: acme, At: timestamppb.New(at),
			ActorType: "user", UserId: ada.UserID, Action: "env.set", Target: "apps/web/env", App: "web", Ip: "198.51.100.7",
			Outcome: "success", Metadata: map[string]string{"keys": "A,B"}}
		if i%2 == 1 {
			e.ActorType, e.UserId, e.TokenId, e.Action, e.App, e.Outcome = "token", bob.UserID, tokenID, "deploy.create", "api", "denied"
		}
		h.record(e)
		ids = append(ids, e.EntryId)
	}
	adaFirst := ids[0]
	// Entries at the same moment read by id, descending.
	if ids[0] < ids[1] {
		ids[0], ids[1] = ids[1], ids[0]
	}
	h.record(&auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: acme, At: timestamppb.New(now.Add(-8 * 24 * time.Hour)),
		ActorType: "user", UserId: ada.UserID, Action: "app.create", Target: "apps", Outcome: "success"})
	// Another team's entry never shows.
	h.record(&auditv1.EntryRecorded{EntryId: uuid.NewString(), TeamId: dan.AccountID, At: timestamppb.New(now),
		ActorType: "user", UserId: dan.UserID, Action: "env.set", Target: "x", Outcome: "success"})

	adaS := h.callerOf(mustSession(h, "ada@example.com"))
	read := func(query string) map[string]any {
		t.Helper()
		r := h.do("GET", "/api/teams/acme/audit"+query, nil, adaS)
		h.expect(r, 200, "")
		return r.json(t)
	}
	idsOf := func(m map[string]any) (out []string) {
		for _, e := range m["entries"].([]any) {
			out = append(out, e.(map[string]any)["id"].(string))
		}
		return out
	}

	// Pages of three, newest first, by the opaque cursor.
	var got []string
	cursor, pages := "", 0
	for {
		q := "?limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		m := read(q)
		got = append(got, idsOf(m)...)
		pages++
		if m["nextCursor"] == nil {
			break
		}
		cursor = m["nextCursor"].(string)
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || pages != 3 {
		t.Fatalf("paged %v in %d pages, want %v", got, pages, ids)
	}

	var e map[string]any
	for _, it := range read("?limit=2")["entries"].([]any) {
		if it.(map[string]any)["id"] == adaFirst {
			e = it.(map[string]any)
		}
	}
	if keys(e) != "action,actor,app,at,id,ip,metadata,outcome,target" || keys(e["actor"].(map[string]any)) != "email,tokenId,type,userId" {
		t.Fatalf("entry shape %v", e)
	}
	if a := e["actor"].(map[string]any); a["email"] != "ada@example.com" || a["userId"] != ada.UserID || a["tokenId"] != nil || a["type"] != "user" ||
		e["at"] != apiTime(now.Add(-time.Minute)) || e["ip"] != "198.51.100.7" || fmt.Sprint(e["metadata"]) != "map[keys:A,B]" {
		t.Fatalf("entry %v", e)
	}

	// Ada's and bob's entries, newest first, whichever of the first two sorts first.
	var adas, bobs []string
	for _, id := range ids {
		if id == adaFirst || (id != ids[0] && id != ids[1] && (indexOf(ids, id)%2 == 0)) {
			adas = append(adas, id)
		} else {
			bobs = append(bobs, id)
		}
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?action=deploy.create", bobs},
		{"?app=web", adas},
		{"?actor=" + tokenID, bobs},
		{"?actor=" + bob.UserID, bobs},
		{"?actor=ADA@example.com", adas},
		{"?start=" + url.QueryEscape(apiTime(now.Add(-4*time.Minute))) + "&end=" + url.QueryEscape(apiTime(now.Add(-2*time.Minute))), []string{ids[3], ids[4]}},
		{"?action=deploy.create&app=web", nil},
	} {
		if got := idsOf(read(tc.query)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}

	// Nestling keeps seven days; a start before that is gone, even while the prune lags.
	h.expect(h.do("GET", "/api/teams/acme/audit?start="+url.QueryEscape(apiTime(now.Add(-8*24*time.Hour))), nil, adaS), 410, "beyond_retention")
	read("?start=" + url.QueryEscape(apiTime(now.Add(-7*24*time.Hour))))
	// A plan keeping thirty days shows the older entry.
	h.retention(acme, 30)
	if got := read("?start=" + url.QueryEscape(apiTime(now.Add(-8*24*time.Hour)))); len(got["entries"].([]any)) != 8 {
		t.Fatalf("30 days: %v", got)
	}
	h.expect(h.do("GET", "/api/teams/acme/audit?start="+url.QueryEscape(apiTime(now.Add(-31*24*time.Hour))), nil, adaS), 410, "beyond_retention")

	for q, field := range map[string]string{"?limit=0": "limit", "?limit=201": "limit", "?limit=x": "limit", "?cursor=nope": "cursor",
		"?start=yesterday": "start", "?end=2026-13-01T00:00:00Z": "end"} {
		if m := h.expect(h.do("GET", "/api/teams/acme/audit"+q, nil, adaS), 400, "invalid_parameter"); m["field"] != field {
			t.Errorf("%s: field %v", q, m["field"])
		}
	}
	// Admins read the log; a developer is refused, a stranger does not see the team.
	h.expect(h.do("GET", "/api/teams/acme/audit", nil, h.callerOf(mustSession(h, "bob@example.com"))), 403, "insufficient_role")
	h.expect(h.do("GET", "/api/teams/acme/audit", nil, h.callerOf(mustSession(h, "dan@example.com"))), 404, "not found")
}

func indexOf(l []string, s string) int {
	for i, v := range l {
		if v == s {
			return i
		}
	}
	return -1
}
