package routes

import "testing"

func TestFind(t *testing.T) {
	cases := []struct {
		method, path string
		op, owner    string
		public       bool
		bucket       Bucket
	}{
		{"GET", "/healthz", "GET /healthz", Local, true, NoBucket},
		{"HEAD", "/healthz", "GET /healthz", Local, true, NoBucket},
		{"GET", "/readyz", "GET /readyz", Local, true, NoBucket},
		{"GET", "/api/openapi.json", "GET /api/openapi.json", Local, true, NoBucket},
		{"GET", "/api/plans", "GET /api/plans", Billing, true, NoBucket},
		{"POST", "/api/auth/magic-link", "POST /api/auth/magic-link", Identity, true, CountAll},
		{"POST", "/api/auth/magic-link/verify", "POST /api/auth/magic-link/verify", Identity, true, CountAll},
		{"POST", "/api/auth/cli/device", "POST /api/auth/cli/device", Identity, true, CountAll},
		{"POST", "/api/auth/cli/token", "POST /api/auth/cli/token", Identity, true, CountFlagged},
		{"POST", "/api/auth/cli/approve", "POST /api/auth/cli/approve", Identity, false, CountAll},
		{"POST", "/api/auth/logout", "POST /api/auth/logout", Identity, false, CountAll},
		// Public is per operation: the same path with another method needs a token.
		{"GET", "/api/auth/magic-link", "GET unknown", Identity, false, NoBucket},
		{"POST", "/api/plans", "POST unknown", Billing, false, NoBucket},
		{"GET", "/api/account", "GET /api/account", Identity, false, NoBucket},
		{"PATCH", "/api/account", "PATCH /api/account", Identity, false, NoBucket},
		{"DELETE", "/api/tokens/0193a", "DELETE /api/tokens/{id}", Identity, false, NoBucket},
		{"GET", "/api/billing", "GET /api/billing", Billing, false, NoBucket},
		{"POST", "/api/billing/checkout", "POST /api/billing/checkout", Billing, false, NoBucket},
		{"GET", "/api/apps", "GET /api/apps", Apps, false, NoBucket},
		{"GET", "/api/apps/blue-bird", "GET /api/apps/{slug}", Apps, false, NoBucket},
		{"DELETE", "/api/apps/blue-bird", "DELETE /api/apps/{slug}", Apps, false, NoBucket},
		{"PUT", "/api/apps/blue-bird/env", "PUT /api/apps/{slug}/env", Apps, false, NoBucket},
		{"DELETE", "/api/apps/blue-bird/env/API_KEY", "DELETE /api/apps/{slug}/env/{key}", Apps, false, NoBucket},
		{"DELETE", "/api/apps/b/domains/www.example.com", "DELETE /api/apps/{slug}/domains/{hostname}", Apps, false, NoBucket},
		{"POST", "/api/apps/b/deploys", "POST /api/apps/{slug}/deploys", Deploys, false, NoBucket},
		{"POST", "/api/apps/b/deploys/d1/rollback", "POST /api/apps/{slug}/deploys/{id}/rollback", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/formation", "GET /api/apps/{slug}/formation", Deploys, false, NoBucket},
		{"PATCH", "/api/apps/b/formation", "PATCH /api/apps/{slug}/formation", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/crons", "GET /api/apps/{slug}/crons", Deploys, false, NoBucket},
		{"POST", "/api/apps/b/crons", "POST /api/apps/{slug}/crons", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/crons/nightly", "GET /api/apps/{slug}/crons/{name}", Deploys, false, NoBucket},
		{"PATCH", "/api/apps/b/crons/nightly", "PATCH /api/apps/{slug}/crons/{name}", Deploys, false, NoBucket},
		{"DELETE", "/api/apps/b/crons/nightly", "DELETE /api/apps/{slug}/crons/{name}", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/crons/nightly/runs", "GET /api/apps/{slug}/crons/{name}/runs", Deploys, false, NoBucket},
		{"POST", "/api/apps/b/crons/nightly/runs", "POST /api/apps/{slug}/crons/{name}/runs", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/logs", "GET /api/apps/{slug}/logs", Logs, false, NoBucket},
		{"POST", "/api/apps/b/database/restores", "POST /api/apps/{slug}/database/restores", Databases, false, NoBucket},
		// Fiber's defaults in the services: case-insensitive, one trailing slash ignored.
		{"GET", "/API/Apps/b/", "GET /api/apps/{slug}", Apps, false, NoBucket},
		{"GET", "/api/plans/", "GET /api/plans", Billing, true, NoBucket},
		// Unlisted paths go to the prefix's owner, counted as unknown.
		{"GET", "/api/apps/b/deploys/d1/logs", "GET unknown", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/database/dumps/x", "GET unknown", Databases, false, NoBucket},
		{"GET", "/api/apps/b/database/dumps/x/download", "GET /api/apps/{slug}/database/dumps/{id}/download", Databases, false, NoBucket},
		{"POST", "/api/apps/b/database/dumps", "POST /api/apps/{slug}/database/dumps", Databases, false, NoBucket},
		{"GET", "/api/apps/b/env/KEY", "GET unknown", Apps, false, NoBucket},
		{"PUT", "/api/apps/b/formation", "PUT unknown", Deploys, false, NoBucket},
		{"GET", "/api/apps/b/crons/nightly/runs/r1", "GET unknown", Deploys, false, NoBucket},
		{"POST", "/api/auth/new-thing", "POST unknown", Identity, false, NoBucket},
		// Teams and invitations are identity's.
		{"GET", "/api/teams", "GET /api/teams", Identity, false, NoBucket},
		{"DELETE", "/api/teams/acme/members/0193a", "DELETE /api/teams/{team}/members/{userId}", Identity, false, NoBucket},
		{"DELETE", "/api/teams/acme/tokens/0193a", "DELETE /api/teams/{team}/tokens/{id}", Identity, false, NoBucket},
		{"GET", "/api/teams/acme/audit", "GET /api/teams/{team}/audit", Identity, false, NoBucket},
		{"POST", "/api/invitations/accept", "POST /api/invitations/accept", Identity, false, NoBucket},
		{"GET", "/api/teams/acme/apps", "GET unknown", Identity, false, NoBucket},
		{"GET", "/api/invitations", "GET unknown", Identity, false, NoBucket},
		// Nobody owns these: the gateway answers 404.
		{"GET", "/", "GET unknown", "", false, NoBucket},
		{"GET", "/api", "GET unknown", "", false, NoBucket},
		{"GET", "/api/apps/b/logs/x", "GET unknown", "", false, NoBucket},
		{"GET", "/api/apps/b/other", "GET unknown", "", false, NoBucket},
		{"GET", "/internal/introspect", "GET unknown", "", false, NoBucket},
		{"POST", "/internal/introspect", "POST unknown", "", false, NoBucket},
		{"BREW", "/api/apps", "OTHER unknown", Apps, false, NoBucket},
		// Dot and empty segments never match, so no normalisation can turn a public path
		// into a private one or the reverse.
		{"GET", "/api/plans/../account", "GET unknown", "", false, NoBucket},
		{"GET", "/api/account/../plans", "GET unknown", "", false, NoBucket},
		{"GET", "/api//plans", "GET unknown", "", false, NoBucket},
		{"GET", "/api/./plans", "GET unknown", "", false, NoBucket},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			m := Find(tc.method, tc.path)
			if m.Op != tc.op || m.Owner != tc.owner || m.Public() != tc.public || m.Bucket() != tc.bucket {
				t.Fatalf("got op %q owner %q public %v bucket %v; want %q %q %v %v",
					m.Op, m.Owner, m.Public(), m.Bucket(), tc.op, tc.owner, tc.public, tc.bucket)
			}
		})
	}
}

// The public operations are exactly the ones decisions.md lists.
func TestPublicOperations(t *testing.T) {
	want := map[string]bool{
		"GET /healthz": true, "GET /readyz": true, "GET /api/plans": true, "GET /api/openapi.json": true,
		"POST /api/auth/magic-link": true, "POST /api/auth/magic-link/verify": true,
		"POST /api/auth/cli/device": true, "POST /api/auth/cli/token": true,
		"POST /api/billing/webhook": true,
	}
	got := map[string]bool{}
	for _, r := range All() {
		if r.Public {
			got[r.Op()] = true
		}
	}
	if len(got) != len(want) {
		t.Fatalf("public operations %v, want %v", got, want)
	}
	for op := range want {
		if !got[op] {
			t.Fatalf("%s should be public", op)
		}
	}
}

// Every /api/auth route has its own per-address bucket.
func TestAuthRoutesHaveBuckets(t *testing.T) {
	for _, r := range All() {
		isAuth := len(r.Template) > len("/api/auth/") && r.Template[:len("/api/auth/")] == "/api/auth/"
		if isAuth != (r.Bucket != NoBucket) {
			t.Fatalf("%s: bucket %v", r.Op(), r.Bucket)
		}
	}
}

func TestTableHasNoDuplicates(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All() {
		if seen[r.Op()] {
			t.Fatalf("%s listed twice", r.Op())
		}
		seen[r.Op()] = true
	}
}

func TestIsRead(t *testing.T) {
	for m, want := range map[string]bool{"GET": true, "HEAD": true, "POST": false, "PUT": false, "PATCH": false, "DELETE": false} {
		if IsRead(m) != want {
			t.Fatalf("IsRead(%s) = %v", m, !want)
		}
	}
}

func BenchmarkFind(b *testing.B) {
	for b.Loop() {
		Find("GET", "/api/apps/blue-bird/database/dumps")
	}
}
