package gateway

import (
	"strings"
	"testing"

	"tori.dev/contract/access"
	"tori.dev/services/gateway/internal/routes"
)

// Every authenticated operation shows the least role and scope contract/access gives it (the
// table every service enforces), as extensions and as a sentence, and documents the 403 of a
// caller below them; public operations show none. The expected values are read from the
// table here, not from the merge's own helpers.
func TestDocumentShowsEachOperationsRoleAndScope(t *testing.T) {
	doc := document(t)
	paths, _ := doc["paths"].(map[string]any)
	seen := 0
	for _, r := range routes.All() {
		op, _ := paths[r.Template].(map[string]any)[strings.ToLower(r.Method)].(map[string]any)
		if op == nil {
			t.Errorf("%s is not documented", r.Op())
			continue
		}
		if r.Public {
			for _, ext := range []string{"x-tori-role", "x-tori-scope", "x-tori-session-only"} {
				if _, ok := op[ext]; ok {
					t.Errorf("public %s carries %s", r.Op(), ext)
				}
			}
			continue
		}
		a, ok := access.Find(r.Method, r.Template)
		if !ok {
			t.Errorf("%s is not in contract/access", r.Op())
			continue
		}
		seen++
		wantRole := a.Role.String()
		if a.Role == access.NoRole {
			wantRole = "none"
		}
		if op["x-tori-role"] != wantRole {
			t.Errorf("%s: x-tori-role %v, the table says %s", r.Op(), op["x-tori-role"], wantRole)
		}
		if op["x-tori-scope"] != a.Scope.String() {
			t.Errorf("%s: x-tori-scope %v, the table says %s", r.Op(), op["x-tori-scope"], a.Scope)
		}
		if so, has := op["x-tori-session-only"]; a.SessionOnly != has || (has && so != true) {
			t.Errorf("%s: x-tori-session-only %v, the table says %v", r.Op(), so, a.SessionOnly)
		}
		desc, _ := op["description"].(string)
		last := desc[strings.LastIndex(desc, "\n")+1:]
		if !strings.HasPrefix(last, "Requires ") || strings.Count(desc, "Requires ") != 1 {
			t.Errorf("%s: the description does not end with one access sentence: %q", r.Op(), last)
		}
		switch {
		case a.SessionOnly:
			if !strings.Contains(last, "session_required") {
				t.Errorf("%s: %q does not say a session is needed", r.Op(), last)
			}
		case a.Scope == access.FullScope:
			if !strings.Contains(last, "full API token") {
				t.Errorf("%s: %q does not say a full token is needed", r.Op(), last)
			}
		default:
			if !strings.Contains(last, "scope "+a.Scope.String()+".") {
				t.Errorf("%s: %q does not name scope %s", r.Op(), last, a.Scope)
			}
		}
		if a.Role != access.NoRole && !strings.Contains(last, "role "+a.Role.String()+" ") {
			t.Errorf("%s: %q does not name role %s", r.Op(), last, a.Role)
		}
		responses, _ := op["responses"].(map[string]any)
		refusable := a.Role != access.NoRole || a.Scope > access.Read || a.SessionOnly
		if f, ok := responses["403"].(map[string]any); refusable && !ok {
			t.Errorf("%s: no 403 for a caller below its role or scope", r.Op())
		} else if refusable && f["$ref"] == nil {
			if d, _ := f["description"].(string); !strings.Contains(d, "insufficient_role") && !strings.Contains(d, "session_required") {
				t.Errorf("%s: its own 403 does not name the access refusals: %q", r.Op(), d)
			}
		}
		if u, ok := responses["401"].(map[string]any); !ok {
			t.Errorf("%s: no 401", r.Op())
		} else if u["$ref"] == nil && !strings.Contains(u["description"].(string), "token_expired") {
			t.Errorf("%s: its own 401 does not name token_expired", r.Op())
		}
	}
	if seen != len(access.All()) {
		t.Errorf("%d operations checked, the table has %d", seen, len(access.All()))
	}
}

// The shared error shapes name the access refusals and their fields.
func TestAccessRefusalsAreInTheErrorShapes(t *testing.T) {
	doc := document(t)
	comps, _ := doc["components"].(map[string]any)
	schema, _ := comps["schemas"].(map[string]any)["Error"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	for _, f := range []string{"requiredRole", "requiredScope"} {
		if _, ok := props[f]; !ok {
			t.Errorf("Error has no %s", f)
		}
	}
	responses, _ := comps["responses"].(map[string]any)
	forbidden, _ := responses["Forbidden"].(map[string]any)
	unauthorized, _ := responses["Unauthorized"].(map[string]any)
	for _, code := range []string{"insufficient_role", "insufficient_scope", "session_required", "requiredRole", "requiredScope"} {
		if d, _ := forbidden["description"].(string); !strings.Contains(d, code) {
			t.Errorf("the Forbidden response does not name %s", code)
		}
	}
	if d, _ := unauthorized["description"].(string); !strings.Contains(d, "token_expired") {
		t.Error("the Unauthorized response does not name token_expired")
	}
}
