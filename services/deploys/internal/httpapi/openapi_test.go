package httpapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"tori.dev/contract/access"
)

// The fragment describes every route served here, and each route's refusals as the access
// table decides them: a 403 naming the role and the scope wherever the table can refuse, and
// none where it cannot.
func TestOpenAPIFragmentDocumentsEveryRouteAndItsAccess(t *testing.T) {
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("fragment is not JSON: %v", err)
	}
	e := newEnv(t, testPlan)
	param := regexp.MustCompile(`:(\w+)`)
	served := 0
	for _, r := range e.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" {
			continue
		}
		served++
		p := strings.TrimSuffix(param.ReplaceAllString(r.Path, "{$1}"), "/")
		opRaw, ok := doc.Paths[p][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s %s is served but not in openapi-fragment.json", r.Method, p)
			continue
		}
		var op struct {
			Responses map[string]struct {
				Description string `json:"description"`
			} `json:"responses"`
		}
		if err := json.Unmarshal(opRaw, &op); err != nil {
			t.Fatal(err)
		}
		route, _ := access.Find(r.Method, p)
		forbidden := op.Responses["403"].Description
		for _, want := range []struct {
			can         bool
			code, value string
		}{
			{route.Role > access.Viewer, access.CodeInsufficientRole, "`" + route.Role.String() + "`"},
			{route.Scope > access.Read, access.CodeInsufficientScope, "`" + route.Scope.String() + "`"},
		} {
			says := strings.Contains(forbidden, want.code)
			if says != want.can || (want.can && !strings.Contains(forbidden, want.value)) {
				t.Errorf("%s %s: 403 %q; the table's refusal %s %s (can happen: %v)", r.Method, p, forbidden, want.code, want.value, want.can)
			}
		}
	}
	if served != 20 {
		t.Errorf("%d /api routes served, want 20", served)
	}
}
