package httpapi

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/health"
	"tori.dev/services/databases/internal/database"
)

// The fragment merged into the OpenAPI document describes every route served here, and the
// Database schema has exactly the fields the routes answer with.
func TestOpenAPIFragmentMatchesTheRoutes(t *testing.T) {
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("fragment is not JSON: %v", err)
	}
	app := New(Deps{SigningKey: []byte("k"), Identity: health.NewIdentity("databases", "test")})
	param := regexp.MustCompile(`:(\w+)`)
	served := 0
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" {
			continue
		}
		served++
		p := param.ReplaceAllString(r.Path, "{$1}")
		if _, ok := doc.Paths[p][strings.ToLower(r.Method)]; !ok {
			t.Errorf("%s %s is served but not in openapi-fragment.json", r.Method, p)
		}
	}
	if served != 10 {
		t.Fatalf("%d /api routes served, want 10", served)
	}

	b, err := json.Marshal(toJSON(database.Database{ID: "i", AppID: "a", CreatedAt: time.Now(), Status: database.StatusReady}))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	var answered, documented, required []string
	for k := range fields {
		answered = append(answered, k)
	}
	s := doc.Components.Schemas["Database"]
	for k := range s.Properties {
		documented = append(documented, k)
	}
	required = append(required, s.Required...)
	sort.Strings(answered)
	sort.Strings(documented)
	sort.Strings(required)
	if strings.Join(answered, ",") != strings.Join(documented, ",") || strings.Join(answered, ",") != strings.Join(required, ",") {
		t.Fatalf("answered %v, documented %v, required %v", answered, documented, required)
	}
}
