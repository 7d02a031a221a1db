package httpapi_test

import (
	"context"
	"testing"

	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/usecase"
)

func TestAccountShapeAndPlanSources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	user := `{"id":"` + ada.UserID + `","email":"ada@example.com","name":"ada"}`

	// Billing does not answer and no event arrived: nothing guesses the limits, the request
	// answers 503 service_unavailable.
	h.plans.answer(nil)
	r := h.do("GET", "/api/account", nil, ada)
	h.expect(r, 503, "service_unavailable")
	if want := `{"error":"service_unavailable","code":"service_unavailable"}`; string(r.body) != want {
		t.Fatalf("account\n got %s\nwant %s", r.body, want)
	}
	if h.plans.count() != 1 {
		t.Fatalf("billing asked %d times, want 1", h.plans.count())
	}

	// Billing answers: its plan is shown and kept, so billing is not asked again.
	h.plans.answer(&songbird)
	want := `{"user":` + user + `,"plan":"songbird","defaultRegion":"eu",` +
		`"limits":{"maxCustomDomains":5,"database":{"connectionLimit":20,"maxBytes":1073741824},` +
		`"processTypes":4,"instancesPerProcess":3,"instancesTotal":8,"cronJobs":10,` +
		`"cronMinIntervalMinutes":10,"cronTimeoutSeconds":3600,"instanceMemoryBytes":536870912}}`
	for range 2 {
		if r := h.do("GET", "/api/account", nil, ada); string(r.body) != want {
			t.Fatalf("account\n got %s\nwant %s", r.body, want)
		}
	}
	if h.plans.count() != 2 {
		t.Fatalf("billing asked %d times, want 2", h.plans.count())
	}

	// An account billing has not recorded: billing's nestling answer, and nothing else in
	// the body.
	h.plans.answer(&nestling)
	_, bob := h.signIn("bob@example.com")
	r = h.do("GET", "/api/account", nil, bob)
	h.expect(r, 200, "")
	want = `{"user":{"id":"` + bob.UserID + `","email":"bob@example.com","name":"bob"},"plan":"nestling","defaultRegion":"eu",` +
		`"limits":{"maxCustomDomains":0,"database":{"connectionLimit":5,"maxBytes":268435456},` +
		`"processTypes":2,"instancesPerProcess":1,"instancesTotal":2,"cronJobs":2,` +
		`"cronMinIntervalMinutes":60,"cronTimeoutSeconds":900,"instanceMemoryBytes":268435456}}`
	if string(r.body) != want {
		t.Fatalf("account\n got %s\nwant %s", r.body, want)
	}
}

var songbird = account.Plan{Name: "songbird", Version: 1, Limits: account.Limits{MaxCustomDomains: 5, DatabaseConnections: 20, DatabaseBytes: 1073741824,
	Processes: account.ProcessLimits{ProcessTypes: 4, InstancesPerProcess: 3, InstancesTotal: 8, CronJobs: 10,
		CronMinIntervalMinutes: 10, CronTimeoutSeconds: 3600, InstanceMemoryBytes: 536870912}}}

// A copy kept before plans had process limits shows them once billing has been asked again
// (once: the completed copy is kept); while billing does not answer the copy is shown as it is,
// never an error.
func TestAPlanCopyWithoutProcessLimitsIsCompletedFromBilling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	old := songbird
	old.Limits.Processes = account.ProcessLimits{}
	if _, err := h.store.SavePlan(context.Background(), ada.AccountID, old); err != nil {
		t.Fatal(err)
	}
	limits := func() map[string]any {
		t.Helper()
		r := h.do("GET", "/api/account", nil, ada)
		h.expect(r, 200, "")
		return r.json(t)["limits"].(map[string]any)
	}

	h.plans.answer(nil)
	if l := limits(); l["maxCustomDomains"] != float64(5) || l["processTypes"] != float64(0) {
		t.Fatalf("billing down: limits %v, want the kept copy", l)
	}
	h.plans.answer(&songbird)
	calls := h.plans.count()
	for range 2 {
		if l := limits(); l["processTypes"] != float64(4) || l["instancesPerProcess"] != float64(3) || l["cronMinIntervalMinutes"] != float64(10) {
			t.Fatalf("limits %v, want songbird's process limits", l)
		}
	}
	if n := h.plans.count() - calls; n != 1 {
		t.Fatalf("billing asked %d times, want 1", n)
	}
}

// A PATCH that needs a plan billing cannot give fails before it changes anything.
func TestPatchAccountWithoutPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	before := len(h.events())
	h.plans.answer(nil)
	h.expect(h.do("PATCH", "/api/account", map[string]string{"defaultRegion": "us"}, ada), 503, "service_unavailable")
	if len(h.events()) != before {
		t.Fatalf("a refused PATCH published: %v", h.events())
	}
	h.plans.answer(&nestling)
	if m := h.do("GET", "/api/account", nil, ada).json(t); m["defaultRegion"] != "eu" {
		t.Fatalf("a refused PATCH changed the region: %v", m)
	}
}

func TestPatchAccount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	region := func(r response) string {
		t.Helper()
		h.expect(r, 200, "")
		m := r.json(t)
		if keys(m) != "defaultRegion,limits,plan,user" || keys(m["user"].(map[string]any)) != "email,id,name" {
			t.Fatalf("PATCH answers the account: %s", r.body)
		}
		return m["defaultRegion"].(string)
	}
	events := func() int { return len(h.events()) }
	before := events()

	// Unknown fields are ignored; only defaultRegion is written.
	r := h.raw("PATCH", "/api/account", []byte(`{"defaultRegion":"us","plan":"flock","user":{"email":"eve@example.com","name":"eve"},"limits":{"maxCustomDomains":99}}`), ada)
	if region(r) != "us" {
		t.Fatal("region not written")
	}
	m := r.json(t)
	if m["plan"] != "nestling" || m["user"].(map[string]any)["email"] != "ada@example.com" || m["limits"].(map[string]any)["maxCustomDomains"] != float64(0) {
		t.Fatalf("PATCH wrote more than the region: %s", r.body)
	}
	var ev identityv1.AccountUpdated
	h.lastEvent("identity.account.updated", &ev)
	if ev.AccountId != ada.AccountID || ev.DefaultRegion != "us" || events() != before+1 {
		t.Fatalf("account.updated %v", &ev)
	}

	// Bodies without a recognised region leave the account as it was, and publish nothing.
	for _, body := range []string{`{}`, ``, `{"defaultRegion":"mars"}`, `{"defaultRegion":"EU"}`, `{"defaultRegion":5}`,
		`{"defaultRegion":null}`, `{"region":"eu"}`, `[]`, `"eu"`, `null`, `{"defaultRegion":"us"}`} {
		if got := region(h.raw("PATCH", "/api/account", []byte(body), ada)); got != "us" {
			t.Fatalf("%s changed the region to %s", body, got)
		}
	}
	if events() != before+1 {
		t.Fatal("an unchanged account published an update")
	}
	// Only a body that is not JSON at all is refused.
	h.expect(h.raw("PATCH", "/api/account", []byte(`{"defaultRegion":`), ada), 400, "invalid_body")

	if region(h.do("PATCH", "/api/account", map[string]string{"defaultRegion": "eu"}, ada)) != "eu" {
		t.Fatal("region not written back")
	}
	if region(h.do("GET", "/api/account", nil, ada)) != "eu" {
		t.Fatal("GET does not show the written region")
	}

	// An API token may read and change the account: only minting credentials needs a session.
	secret := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, ada).json(t)["token"].(string)
	if region(h.do("PATCH", "/api/account", map[string]string{"defaultRegion": "us"}, h.callerOf(secret))) != "us" {
		t.Fatal("API token could not change the region")
	}
}

func TestAccountsAreSeparate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	_, bob := h.signIn("bob@example.com")
	h.expect(h.do("PATCH", "/api/account", map[string]string{"defaultRegion": "us"}, ada), 200, "")
	m := h.do("GET", "/api/account", nil, bob).json(t)
	if m["defaultRegion"] != "eu" || m["user"].(map[string]any)["email"] != "bob@example.com" || ada.AccountID == bob.AccountID {
		t.Fatalf("bob's account %v", m)
	}
}

// A plan change identity keeps is announced as identity.account.updated, with the account's
// settings as they are, after the copy is saved: gateways drop their copy of the account on
// it, so they never drop it before identity has the plan. An older plan announces nothing.
func TestAKeptPlanChangeAnnouncesTheAccount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	updates := func() int {
		n := 0
		for _, k := range h.events() {
			if k == "identity.account.updated" {
				n++
			}
		}
		return n
	}
	apply := func(p account.Plan) bool {
		var saved bool
		err := h.store.InTx(context.Background(), func(tx usecase.Repo) error {
			var err error
			saved, err = usecase.ApplyPlanChange(context.Background(), tx, ada.AccountID, p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	if !apply(account.Plan{Name: "flock", Limits: account.Limits{MaxCustomDomains: 50}, Version: 3}) || updates() != 1 {
		t.Fatalf("a newer plan: %d account.updated events, want 1", updates())
	}
	var ev identityv1.AccountUpdated
	h.lastEvent("identity.account.updated", &ev)
	if ev.GetAccountId() != ada.AccountID || ev.GetDefaultRegion() != "eu" {
		t.Fatalf("event %v", &ev)
	}
	if m := h.do("GET", "/api/account", nil, ada).json(t); m["plan"] != "flock" {
		t.Fatalf("plan after the change: %v", m["plan"])
	}
	if apply(account.Plan{Name: "songbird", Version: 2}) || updates() != 1 {
		t.Fatalf("an older plan must be ignored and announce nothing: %d events", updates())
	}
}
