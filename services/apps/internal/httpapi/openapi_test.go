package httpapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"tori.dev/services/apps/internal/httpapi"
)

// The OpenAPI fragment the lead merges must describe exactly the routes served.
func TestOpenAPIFragmentCoversEveryRoute(t *testing.T) {
	b, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	param := regexp.MustCompile(`:([a-z]+)`)
	served := map[string]bool{}
	app := httpapi.New(httpapi.Deps{})
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" || r.Method == "USE" {
			continue
		}
		served[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	if len(served) != 11 {
		t.Fatalf("found %d served routes: %v", len(served), served)
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("%s is served but not documented", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("%s is documented but not served", k)
		}
	}
	for _, ref := range regexp.MustCompile(`#/components/schemas/(\w+)`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("schema %s is referenced but not defined", ref[1])
		}
	}
}
