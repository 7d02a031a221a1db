package e2e

import (
	"net/http"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

func TestAccount(t *testing.T) {
	s := defaultStack(t)

	patch := func(t *testing.T, token string, body any) map[string]any {
		t.Helper()
		r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: token, Body: body})
		if r.Status != http.StatusOK {
			t.Fatalf("PATCH %v: %d %s", body, r.Status, r.Body)
		}
		return r.Map(t)
	}

	t.Run("only defaultRegion is writable; unknown fields ignored", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "patch")
		got := patch(t, a.Token, map[string]any{"defaultRegion": "us", "plan": "flock", "user": map[string]string{"email": "x@evil.test", "name": "Mallory"}, "limits": map[string]int{"maxCustomDomains": 99}, "color": "red"})
		if got["defaultRegion"] != "us" || got["plan"] != "nestling" {
			t.Fatalf("after PATCH: %v", got)
		}
		u := got["user"].(map[string]any)
		if u["email"] != a.Email || u["name"] == "Mallory" {
			t.Fatalf("user changed: %v", u)
		}
		if got["limits"].(map[string]any)["maxCustomDomains"] != float64(0) {
			t.Fatal("limits changed")
		}
		// The write is durable: a fresh read agrees.
		if s.Get(t, "/api/account", a.Token).Map(t)["defaultRegion"] != "us" {
			t.Fatal("defaultRegion not stored")
		}
		back := patch(t, a.Token, map[string]string{"defaultRegion": "eu"})
		if back["defaultRegion"] != "eu" {
			t.Fatalf("back to eu: %v", back)
		}
	})

	t.Run("a body without a recognised region leaves the account as it was", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "noregion")
		before := s.Get(t, "/api/account", a.Token)
		for _, body := range []any{map[string]any{}, map[string]any{"defaultRegion": "mars"}, map[string]any{"defaultRegion": 7}, map[string]any{"defaultRegion": "EU"}, map[string]any{"defaultregion": "us"}} {
			got := patch(t, a.Token, body)
			if got["defaultRegion"] != "eu" {
				t.Fatalf("PATCH %v changed the region: %v", body, got)
			}
		}
		after := s.Get(t, "/api/account", a.Token)
		if string(before.Body) != string(after.Body) {
			t.Fatalf("account changed:\n%s\n%s", before.Body, after.Body)
		}
		// An empty PATCH body is "no recognised region" too.
		r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: a.Token})
		if r.Status != http.StatusOK || r.Map(t)["defaultRegion"] != "eu" {
			t.Fatalf("empty PATCH: %d %s", r.Status, r.Body)
		}
	})

	t.Run("an api token reads and writes the account too", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "apiacct")
		api := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "x"}).Map(t)["token"].(string)
		if got := patch(t, api, map[string]string{"defaultRegion": "us"}); got["defaultRegion"] != "us" {
			t.Fatalf("PATCH with API token: %v", got)
		}
	})

	t.Run("plans and billing", func(t *testing.T) {
		t.Parallel()
		r := s.Get(t, "/api/plans", "")
		p := r.Map(t)
		billing := p["billing"].(map[string]any)
		if billing["taxInclusive"] != true || billing["overage"] != "none" {
			t.Fatalf("billing facts: %v", billing)
		}
		plans := p["plans"].([]any)
		names := []string{}
		for _, raw := range plans {
			plan := raw.(map[string]any)
			names = append(names, plan["name"].(string))
			limits := plan["limits"].(map[string]any)
			for _, k := range []string{"apps", "customDomains", "concurrentDeploys", "uploadBytes", "databaseBytes", "databaseConnections", "buildMinutes", "minScale", "cpu", "logRetentionDays",
				"processTypes", "instancesPerProcess", "instancesTotal", "cronJobs", "cronMinIntervalMinutes", "cronTimeoutSeconds", "instanceMemoryBytes"} {
				if _, ok := limits[k].(float64); !ok {
					t.Fatalf("plan %s limit %s = %v", plan["name"], k, limits[k])
				}
			}
			if plan["prices"] == nil {
				t.Fatalf("plan %s has no prices", plan["name"])
			}
			if plan["name"] == "nestling" && limits["customDomains"] != float64(0) {
				t.Fatal("nestling allows custom domains")
			}
		}
		if strings.Join(names, ",") != "nestling,songbird,flock" {
			t.Fatalf("plans %v", names)
		}

		a := s.NewAccount(t, "billing")
		b := s.Get(t, "/api/billing", a.Token)
		if b.Status != http.StatusOK {
			t.Fatalf("billing: %d %s", b.Status, b.Body)
		}
		bm := b.Map(t)
		if bm["configured"] != false || bm["hold"] != nil || bm["plan"] != "nestling" {
			t.Fatalf("billing state: %v", bm)
		}
		expectError(t, post(s, t, "/api/billing/checkout", a.Token, map[string]string{"plan": "songbird", "interval": "month"}), http.StatusServiceUnavailable, "billing_unavailable")
		expectError(t, post(s, t, "/api/billing/portal", a.Token, nil), http.StatusServiceUnavailable, "billing_unavailable")
	})

	t.Run("the operator command changes an account's plan and its limits", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "operator")
		out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock")
		if err != nil {
			t.Fatalf("set-plan: %v\n%s", err, out)
		}
		harness.Eventually(t, 10e9, "plan change reaches the account", func() bool {
			return s.Get(t, "/api/account", a.Token).Map(t)["plan"] == "flock"
		})
		acc := s.Get(t, "/api/account", a.Token).Map(t)
		if acc["limits"].(map[string]any)["maxCustomDomains"].(float64) <= 0 {
			t.Fatalf("flock limits: %v", acc["limits"])
		}
		if s.Get(t, "/api/billing", a.Token).Map(t)["plan"] != "flock" {
			t.Fatal("billing disagrees about the plan")
		}
	})
}
