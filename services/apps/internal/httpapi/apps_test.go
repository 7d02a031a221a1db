package httpapi_test

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
)

var generatedSlug = regexp.MustCompile(`^[a-z]+-[a-z]+$`)

// checkApp asserts the contract's App: every field present, with its type and rule.
func checkApp(t *testing.T, a map[string]any, appsDomain string) {
	t.Helper()
	fields := []string{"id", "slug", "name", "region", "zone", "status", "framework", "kind", "currentDeployId", "url", "createdAt", "updatedAt", "team"}
	for _, f := range fields {
		if _, ok := a[f]; !ok {
			t.Errorf("App lacks %q: %v", f, a)
		}
	}
	if len(a) != len(fields) {
		t.Errorf("App has extra fields: %v", a)
	}
	for _, f := range fields {
		if f == "currentDeployId" {
			continue
		}
		if _, ok := a[f].(string); !ok {
			t.Errorf("%s is %T, want string", f, a[f])
		}
	}
	if _, err := uuid.Parse(a["id"].(string)); err != nil {
		t.Errorf("id %v is not a UUID", a["id"])
	}
	if !names.ValidSlug(a["slug"].(string)) {
		t.Errorf("slug %v", a["slug"])
	}
	if r := a["region"]; r != "eu" && r != "us" {
		t.Errorf("region %v", r)
	}
	if !slices.Contains([]string{"running", "napping", "deploying", "error"}, a["status"].(string)) {
		t.Errorf("status %v", a["status"])
	}
	if !slices.Contains([]string{"vite", "next", "astro", "sveltekit", "static"}, a["framework"].(string)) {
		t.Errorf("framework %v", a["framework"])
	}
	if k := a["kind"]; k != "static" && k != "service" {
		t.Errorf("kind %v", k)
	}
	if want := "https://" + a["slug"].(string) + "." + appsDomain; a["url"] != want {
		t.Errorf("url %v, want %s", a["url"], want)
	}
	for _, f := range []string{"createdAt", "updatedAt"} {
		s := a[f].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil || !strings.HasSuffix(s, "Z") || len(s) != len("2026-11-22T02:30:00.000Z") {
			t.Errorf("%s %q is not RFC 3339 UTC with milliseconds", f, s)
		}
	}
}

func TestCreateWithoutBodyGeneratesAdjectiveBirdSlug(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	for _, body := range []any{nil, "", "{}", "null"} {
		a := s.CreateApp(acct, body)
		checkApp(t, a, "apps.localhost")
		if !generatedSlug.MatchString(a["slug"].(string)) {
			t.Errorf("generated slug %q is not adjective-bird", a["slug"])
		}
		if a["name"] != a["slug"] || a["status"] != "deploying" || a["currentDeployId"] != nil ||
			a["framework"] != "static" || a["kind"] != "static" || a["region"] != "eu" || a["zone"] != "local" ||
			a["createdAt"] != a["updatedAt"] {
			t.Errorf("new app %v", a)
		}
		s.Must(http.StatusOK, acct, http.MethodDelete, "/api/apps/"+a["slug"].(string), nil)
	}
}

func TestCreateAppFieldsAndURL(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{Env: map[string]string{"APPS_DOMAIN": "example.net", "ZONE_US": "us-1"}})
	acct := apptest.NewAccount()
	a := s.CreateApp(acct, map[string]any{"name": "my-site", "region": "us", "kind": "service"})
	checkApp(t, a, "example.net")
	if a["url"] != "https://my-site.example.net" || a["zone"] != "us-1" || a["kind"] != "service" || a["name"] != "my-site" {
		t.Fatalf("app %v", a)
	}
	got := s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/my-site", nil).Map(t)
	for k, v := range a {
		if got[k] != v {
			t.Errorf("GET %s = %v, POST said %v", k, got[k], v)
		}
	}
	var list []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps", nil).JSON(t, &list)
	if len(list) != 1 || list[0]["id"] != a["id"] {
		t.Fatalf("list %v", list)
	}
	checkApp(t, list[0], "example.net")
	if !slices.Equal(s.OutboxKeys(), []string{"apps.app.created"}) {
		t.Fatalf("outbox %v", s.OutboxKeys())
	}
}

func TestCreateNameMustBeASlug(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.SetPlan(acct, "flock", 1)
	bad := []any{"", "My-App", "my_app", "my app", "héllo", "a.b", strings.Repeat("a", 64), 42, true, []string{"x"}, map[string]any{}}
	for _, name := range bad {
		r := s.Do(acct, http.MethodPost, "/api/apps", map[string]any{"name": name})
		if m := r.Map(t); r.Status != http.StatusBadRequest || m["error"] != "invalid slug" || m["code"] != "invalid_slug" ||
			m["message"] != "A name must match "+names.SlugPattern+"." {
			t.Errorf("name %#v: %d %s", name, r.Status, r.Body)
		}
	}
	// The contract's pattern, which identity's mails about an app hold its slug to as well
	// (#37: a slug with a leading hyphen once had its mails dead-lettered).
	for _, name := range []string{"a", "0", "-", "-abc", "abc-", "my-app-2", strings.Repeat("z", 63)} {
		a := s.CreateApp(acct, map[string]any{"name": name})
		if a["slug"] != name || a["name"] != name {
			t.Errorf("name %q gave %v", name, a)
		}
	}
}

func TestReservedAndTakenSlugs(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	alice, bob := apptest.NewAccount(), apptest.NewAccount()
	for _, name := range []string{"api", "console", "admin", "www", "tori", "enroll", "my"} {
		r := s.Do(alice, http.MethodPost, "/api/apps", map[string]any{"name": name})
		if r.Status != http.StatusConflict || r.Map(t)["error"] != "slug taken" {
			t.Errorf("reserved %q: %d %s", name, r.Status, r.Body)
		}
	}
	s.CreateApp(alice, map[string]any{"name": "shared"})
	for _, who := range []string{alice, bob} {
		r := s.Do(who, http.MethodPost, "/api/apps", map[string]any{"name": "shared"})
		if r.Status != http.StatusConflict || r.Map(t)["error"] != "slug taken" {
			t.Errorf("taken slug: %d %s", r.Status, r.Body)
		}
	}
}

func TestRegionDefaultsToTheAccountsAndIsChecked(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	fresh, usAccount := apptest.NewAccount(), apptest.NewAccount()
	if a := s.CreateApp(fresh, nil); a["region"] != "eu" {
		t.Errorf("account without identity event: region %v, want eu", a["region"])
	}
	s.SetRegion(usAccount, "us")
	if a := s.CreateApp(usAccount, nil); a["region"] != "us" {
		t.Errorf("omitted region on a us account: %v", a["region"])
	}
	if a := s.CreateApp(usAccount, map[string]any{"region": "eu"}); a["region"] != "eu" {
		t.Errorf("explicit eu: %v", a["region"])
	}
	for _, region := range []any{"mars", "EU", "", 1} {
		r := s.Do(usAccount, http.MethodPost, "/api/apps", map[string]any{"region": region})
		if r.Status != http.StatusBadRequest || r.Map(t)["code"] != "invalid_region" {
			t.Errorf("region %#v: %d %s", region, r.Status, r.Body)
		}
	}
}

func TestKindIsServiceOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.SetPlan(acct, "songbird", 1)
	cases := []struct {
		kind any
		want string
	}{{nil, "static"}, {"service", "service"}, {"static", "static"}, {"SERVICE", "static"}, {"worker", "static"}, {7, "static"}}
	for _, c := range cases {
		body := map[string]any{}
		if c.kind != nil {
			body["kind"] = c.kind
		}
		if a := s.CreateApp(acct, body); a["kind"] != c.want {
			t.Errorf("kind %#v made %v, want %s", c.kind, a["kind"], c.want)
		}
	}
}

func TestMalformedBodiesAre400(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	for _, body := range []string{"{", "[]", `"name"`, "nul", `{"name": "x",}`, "\x00"} {
		for _, path := range []string{"/api/apps"} {
			r := s.Do(acct, http.MethodPost, path, body)
			if r.Status != http.StatusBadRequest || r.Map(t)["error"] != "invalid_json" {
				t.Errorf("POST %s %q: %d %s", path, body, r.Status, r.Body)
			}
		}
	}
}

func TestAppLimitCountsLiveAppsOnly(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	var slugs []string
	for i := 0; i < 3; i++ {
		slugs = append(slugs, s.CreateApp(acct, nil)["slug"].(string))
	}
	r := s.Do(acct, http.MethodPost, "/api/apps", map[string]any{"name": "fourth"})
	body := r.Map(t)
	if r.Status != http.StatusForbidden || body["code"] != "app_limit_reached" || body["limit"] != float64(3) || body["plan"] != "nestling" {
		t.Fatalf("fourth app: %d %s", r.Status, r.Body)
	}
	if msg, _ := body["error"].(string); !strings.Contains(msg, " ") || !strings.Contains(msg, "nestling") {
		t.Errorf("error %q is not a human sentence", msg)
	}
	// A tombstone does not count: deleting frees a place at once.
	s.Must(http.StatusOK, acct, http.MethodDelete, "/api/apps/"+slugs[0], nil)
	s.CreateApp(acct, map[string]any{"name": "fourth"})
	// A plan change raises the limit.
	s.SetPlan(acct, "songbird", 1)
	s.CreateApp(acct, nil)
	// A late older plan event does not undo it.
	s.SetPlan(acct, "nestling", 0)
	s.CreateApp(acct, nil)
}

func TestAppLimitHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Do(acct, http.MethodPost, "/api/apps", nil)
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[http.StatusCreated] != 3 || statuses[http.StatusForbidden] != 5 {
		t.Fatalf("statuses %v, want 3 created and 5 refused", statuses)
	}
}

func TestPlanIsAskedOfBillingOnceWhenNoEventCame(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, nil)
	s.CreateApp(acct, nil)
	if s.Plans.Asked != 1 {
		t.Fatalf("billing asked %d times, want once", s.Plans.Asked)
	}
	other := apptest.NewAccount()
	s.Plans.Fail = errors.New("billing is down")
	r := s.Do(other, http.MethodPost, "/api/apps", nil)
	if r.Status != http.StatusServiceUnavailable || r.Map(t)["code"] != "plan_unavailable" {
		t.Fatalf("without a plan: %d %s", r.Status, r.Body)
	}
	// An event brings the plan; billing is not needed any more.
	s.SetPlan(other, "nestling", 1)
	s.CreateApp(other, nil)
}

func TestDeleteHoldsSlugUntilCleanupConfirmed(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{Env: map[string]string{"APPS_CLEANUP_SERVICES": "logs,deploys"}})
	alice, bob := apptest.NewAccount(), apptest.NewAccount()
	a := s.CreateApp(alice, map[string]any{"name": "old-site"})
	s.Must(http.StatusCreated, alice, http.MethodPut, "/api/apps/old-site/env", map[string]any{"key": "K", "value": "v"})

	del := s.Must(http.StatusOK, alice, http.MethodDelete, "/api/apps/old-site", nil).Map(t)
	if len(del) != 2 || del["ok"] != true || del["reclaimed"] != false {
		t.Fatalf("delete result %v", del)
	}
	if k := s.OutboxKeys(); k[len(k)-1] != "apps.app.deleted" {
		t.Fatalf("outbox %v", k)
	}
	// Gone from every route at once.
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/api/apps/old-site"}, {http.MethodDelete, "/api/apps/old-site"},
		{http.MethodGet, "/api/apps/old-site/env"}, {http.MethodGet, "/api/apps/old-site/domains"},
	} {
		if got := s.Do(alice, r.method, r.path, nil); got.Status != http.StatusNotFound || got.Map(t)["error"] != "not found" {
			t.Errorf("%s %s after delete: %d %s", r.method, r.path, got.Status, got.Body)
		}
	}
	var list []any
	s.Must(http.StatusOK, alice, http.MethodGet, "/api/apps", nil).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("deleted app listed: %v", list)
	}
	// The tombstone holds the slug, for its owner too.
	confirm := func(service string) {
		s.Deliver(s.Consumers.HandleCleanupConfirmed, service+".app.cleaned", &appsv1.AppCleanupConfirmed{AppId: a["id"].(string), Service: service})
	}
	for _, who := range []string{alice, bob} {
		if r := s.Do(who, http.MethodPost, "/api/apps", map[string]any{"name": "old-site"}); r.Status != http.StatusConflict {
			t.Fatalf("slug of an unreclaimed tombstone: %d %s", r.Status, r.Body)
		}
	}
	confirm("logs")
	confirm("logs")    // a redelivered confirmation changes nothing
	confirm("billing") // nor does one from a service not awaited
	if r := s.Do(bob, http.MethodPost, "/api/apps", map[string]any{"name": "old-site"}); r.Status != http.StatusConflict {
		t.Fatalf("slug freed before every service confirmed: %d", r.Status)
	}
	confirm("deploys")
	b := s.CreateApp(bob, map[string]any{"name": "old-site"})
	if b["id"] == a["id"] {
		t.Fatal("the reclaimed app came back")
	}
	// Bob's new app owns the slug; Alice still sees nothing there.
	if r := s.Do(alice, http.MethodGet, "/api/apps/old-site", nil); r.Status != http.StatusNotFound {
		t.Fatalf("alice sees bob's app: %d", r.Status)
	}
}

func TestDeleteWithoutCleanupServicesReclaimsAtOnce(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{Env: map[string]string{"APPS_CLEANUP_SERVICES": ""}})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "brief"})
	del := s.Must(http.StatusOK, acct, http.MethodDelete, "/api/apps/brief", nil).Map(t)
	if del["ok"] != true || del["reclaimed"] != true {
		t.Fatalf("delete result %v", del)
	}
	s.CreateApp(apptest.NewAccount(), map[string]any{"name": "brief"})
}

func TestEveryAppRouteIsolatesAccounts(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	owner, stranger := apptest.NewAccount(), apptest.NewAccount()
	s.SetPlan(owner, "songbird", 1)
	s.SetPlan(stranger, "songbird", 1)
	s.CreateApp(owner, map[string]any{"name": "private"})
	s.Must(http.StatusCreated, owner, http.MethodPut, "/api/apps/private/env", map[string]any{"key": "TOKEN", "value": "x"})
	s.Must(http.StatusCreated, owner, http.MethodPost, "/api/apps/private/domains", map[string]any{"hostname": "private.example.com"})

	routes := []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/api/apps/private", nil},
		{http.MethodDelete, "/api/apps/private", nil},
		{http.MethodGet, "/api/apps/private/env", nil},
		{http.MethodPut, "/api/apps/private/env", map[string]any{"key": "TOKEN", "value": "stolen"}},
		{http.MethodDelete, "/api/apps/private/env/TOKEN", nil},
		{http.MethodGet, "/api/apps/private/domains", nil},
		{http.MethodPost, "/api/apps/private/domains", map[string]any{"hostname": "other.example.com"}},
		{http.MethodDelete, "/api/apps/private/domains/private.example.com", nil},
	}
	for _, r := range routes {
		got := s.Do(stranger, r.method, r.path, r.body)
		if got.Status != http.StatusNotFound || got.Map(t)["error"] != "not found" {
			t.Errorf("stranger %s %s: %d %s", r.method, r.path, got.Status, got.Body)
		}
		// The same answer as for a slug nobody has.
		unknown := s.Do(stranger, r.method, strings.Replace(r.path, "private", "nobody-has-this", 1), r.body)
		if unknown.Status != got.Status || string(unknown.Body) != string(got.Body) {
			t.Errorf("%s %s: another's app (%d %s) differs from an unknown one (%d %s)", r.method, r.path, got.Status, got.Body, unknown.Status, unknown.Body)
		}
	}
	var list []any
	s.Must(http.StatusOK, stranger, http.MethodGet, "/api/apps", nil).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("stranger lists %v", list)
	}
	// Nothing the stranger did touched the owner's app.
	s.Must(http.StatusOK, owner, http.MethodGet, "/api/apps/private", nil)
	var vars []map[string]any
	s.Must(http.StatusOK, owner, http.MethodGet, "/api/apps/private/env", nil).JSON(t, &vars)
	if len(vars) != 1 {
		t.Fatalf("owner's env %v", vars)
	}
}

func TestRoutesNeedTheGatewaysSignature(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	for _, path := range []string{"/api/apps", "/api/apps/x", "/api/apps/x/env", "/api/apps/x/domains"} {
		if r := s.Do("-", http.MethodGet, path, nil); r.Status != http.StatusUnauthorized || r.Map(t)["error"] != "unauthorized" {
			t.Errorf("unsigned %s: %d %s", path, r.Status, r.Body)
		}
		// Signed, but for no account (a public route's caller).
		if r := s.Do("", http.MethodGet, path, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d", path, r.Status)
		}
	}
	h := s.Must(http.StatusOK, "-", http.MethodGet, "/healthz", nil).Map(t)
	if h["service"] != "apps" {
		t.Fatalf("healthz %v", h)
	}
}
