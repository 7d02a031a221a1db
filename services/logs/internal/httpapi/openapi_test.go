package httpapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/access"
	"tori.dev/services/logs/internal/logs"
)

// sharedSchemas are defined once for the whole document, outside this fragment.
var sharedSchemas = map[string]bool{"Error": true}

type fragment struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// The fragment the lead merges into the OpenAPI document must describe every route served
// here and exactly the fields the route answers with.
func TestOpenAPIFragmentMatchesTheRoute(t *testing.T) {
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc fragment
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("fragment is not JSON: %v", err)
	}
	e := newEnv(t)
	param := regexp.MustCompile(`:(\w+)`)
	served := 0
	for _, r := range e.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" {
			continue
		}
		served++
		p := param.ReplaceAllString(r.Path, "{$1}")
		op, ok := doc.Paths[p][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s %s is served but not in openapi-fragment.json", r.Method, p)
		}
		// Every member may read an app's logs, with any token of the team: the table can
		// refuse none, so no 403 is documented.
		if route, _ := access.Find(r.Method, p); route.Role > access.Viewer || route.Scope > access.Read || strings.Contains(string(op), `"403"`) {
			t.Errorf("%s %s: the table (%s, %s) and the fragment's 403 disagree", r.Method, p, route.Role, route.Scope)
		}
	}
	if served != 1 {
		t.Errorf("%d /api routes served, want 1", served)
	}
	for _, ref := range regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok && !sharedSchemas[ref[1]] {
			t.Errorf("dangling $ref to %s", ref[1])
		}
	}

	app := e.newApp(t, "acc", "web")
	e.db.Seed(t, entriesAt(app.ID, testNow.Add(-time.Minute), 2))
	r := e.get(t, "acc", "web", map[string][]string{"limit": {"1"}})
	sameKeys(t, "LogPage", doc.Components.Schemas["LogPage"].Required, r.Body)
	sameKeys(t, "LogPage", keys(doc.Components.Schemas["LogPage"].Properties), r.Body)
	entry := r.Body["entries"].([]any)[0].(map[string]any)
	sameKeys(t, "LogEntry", doc.Components.Schemas["LogEntry"].Required, entry)
	sameKeys(t, "LogEntry", keys(doc.Components.Schemas["LogEntry"].Properties), entry)

	var stream struct {
		Enum []string `json:"enum"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["LogEntry"].Properties["stream"], &stream); err != nil {
		t.Fatal(err)
	}
	var domain []string
	for _, s := range logs.Streams {
		domain = append(domain, string(s))
	}
	if strings.Join(stream.Enum, ",") != strings.Join(domain, ",") {
		t.Errorf("stream enum %v, the domain's streams %v", stream.Enum, domain)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sameKeys(t *testing.T, schema string, want []string, got map[string]any) {
	t.Helper()
	var have []string
	for k := range got {
		have = append(have, k)
	}
	sort.Strings(want)
	sort.Strings(have)
	if strings.Join(want, ",") != strings.Join(have, ",") {
		t.Errorf("%s: schema lists %v, the route answers %v", schema, want, have)
	}
}
