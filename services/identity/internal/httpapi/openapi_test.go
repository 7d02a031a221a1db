package httpapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The OpenAPI fragment the lead merges must describe every public route this service serves,
// and its references must resolve, so the document cannot drift from the code.
func TestOpenAPIFragmentCoversEveryRoute(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("fragment is not JSON: %v", err)
	}
	h := newHarness(t)
	param := regexp.MustCompile(`:(\w+)`)
	seen := 0
	for _, r := range h.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" {
			continue
		}
		seen++
		p := param.ReplaceAllString(r.Path, "{$1}")
		if _, ok := doc.Paths[p][strings.ToLower(r.Method)]; !ok {
			t.Errorf("%s %s is served but not in openapi-fragment.json", r.Method, p)
		}
	}
	if seen < 13 {
		t.Fatalf("only %d routes found", seen)
	}
	for _, ref := range regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("dangling $ref to %s", ref[1])
		}
	}
}
