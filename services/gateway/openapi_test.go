package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tori.dev/services/gateway/internal/openapi"
	"tori.dev/services/gateway/internal/routes"
)

func document(t *testing.T) openapi.Doc {
	t.Helper()
	var doc openapi.Doc
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

func TestDocumentIdentity(t *testing.T) {
	doc := document(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v, want 3.1.0", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["version"] != "1.0.0" {
		t.Fatalf("info.version %v, want 1.0.0", info["version"])
	}
	onDisk, err := os.ReadFile("openapi.json")
	if err != nil || !bytes.Equal(onDisk, OpenAPI) {
		t.Fatal("the served document differs from the repository's file")
	}
}

// The route table and the document describe the same operations, with the same public ones:
// every operation the gateway routes, limits and logs by template is documented, and nothing
// is documented that the gateway would count as unknown.
func TestDocumentAndRouteTableAgree(t *testing.T) {
	doc := document(t)
	paths, _ := doc["paths"].(map[string]any)
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Op()] = r
		item, _ := paths[r.Template].(map[string]any)
		op, ok := item[strings.ToLower(r.Method)].(map[string]any)
		if !ok {
			t.Errorf("%s is routed but not documented", r.Op())
			continue
		}
		sec, hasSec := op["security"].([]any)
		if public := hasSec && len(sec) == 0; public != r.Public {
			t.Errorf("%s: documented public=%v, routed public=%v", r.Op(), public, r.Public)
		}
		responses, _ := op["responses"].(map[string]any)
		want := []string{}
		if r.Owner != routes.Local {
			want = append(want, "503")
			if _, ok := responses["502"]; ok {
				t.Errorf("%s documents a 502: a service that is down is 503", r.Op())
			}
		}
		if r.Method == "POST" {
			want = append(want, "409")
			if !hasIdempotencyKey(op) {
				t.Errorf("%s does not take the Idempotency-Key header", r.Op())
			}
		}
		if !r.Public {
			want = append(want, "401", "429")
		}
		if r.Bucket != routes.NoBucket {
			want = append(want, "429")
		}
		for _, code := range want {
			if _, ok := responses[code]; !ok {
				t.Errorf("%s does not document the gateway's %s", r.Op(), code)
			}
		}
	}
	methods := map[string]bool{"get": true, "put": true, "post": true, "patch": true, "delete": true, "head": true, "options": true}
	for p, item := range paths {
		for m := range item.(map[string]any) {
			if !methods[m] {
				continue
			}
			if _, ok := table[strings.ToUpper(m)+" "+p]; !ok {
				t.Errorf("%s %s is documented but not in the gateway's route table", strings.ToUpper(m), p)
			}
		}
	}
}

func hasIdempotencyKey(op map[string]any) bool {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		if m, _ := p.(map[string]any); m["$ref"] == "#/components/parameters/IdempotencyKey" {
			return true
		}
	}
	return false
}

// Every POST's 409 names the idempotency conditions, whether the gateway's or the service's
// own 409 describes them.
func TestIdempotencyConflictsAreDocumented(t *testing.T) {
	doc := document(t)
	comps, _ := doc["components"].(map[string]any)
	conflict, _ := comps["responses"].(map[string]any)["IdempotencyConflict"].(map[string]any)
	param, _ := comps["parameters"].(map[string]any)["IdempotencyKey"].(map[string]any)
	if param["in"] != "header" || param["name"] != "Idempotency-Key" {
		t.Fatalf("IdempotencyKey parameter: %v", param)
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, r := range routes.All() {
		if r.Method != "POST" || r.Owner == routes.Local {
			continue
		}
		op, _ := paths[r.Template].(map[string]any)["post"].(map[string]any)
		c, _ := op["responses"].(map[string]any)["409"].(map[string]any)
		if c["$ref"] != nil {
			c = conflict
		}
		d, _ := c["description"].(string)
		for _, code := range []string{"idempotency_key_reused", "request_in_progress"} {
			if !strings.Contains(d, code) {
				t.Errorf("%s: 409 does not name %s", r.Op(), code)
			}
		}
	}
}

func TestEveryReferenceResolves(t *testing.T) {
	doc := document(t)
	for _, ref := range openapi.Refs(doc) {
		parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		var node any = doc
		for _, p := range parts {
			m, _ := node.(map[string]any)
			node = m[p]
		}
		if node == nil {
			t.Errorf("dangling $ref %s", ref)
		}
	}
}

// The gateway's error answers are described once, as components every operation refers to.
func TestGatewayErrorsAreComponents(t *testing.T) {
	doc := document(t)
	comps, _ := doc["components"].(map[string]any)
	responses, _ := comps["responses"].(map[string]any)
	for _, name := range []string{"Unauthorized", "RateLimited", "ServiceUnavailable", "IdempotencyConflict"} {
		if _, ok := responses[name]; !ok {
			t.Errorf("components.responses.%s missing", name)
		}
	}
	schemas, _ := comps["schemas"].(map[string]any)
	errSchema, _ := schemas["Error"].(map[string]any)
	props, _ := errSchema["properties"].(map[string]any)
	for _, f := range []string{"error", "code", "retryAfter", "retryAfterSeconds"} {
		if _, ok := props[f]; !ok {
			t.Errorf("Error schema lacks %s", f)
		}
	}
	if _, ok := comps["securitySchemes"].(map[string]any)["bearerAuth"]; !ok {
		t.Error("no bearerAuth security scheme")
	}
}

// Each service describes its own routes in services/<name>/openapi-fragment.json; the
// document is their merge (`make openapi`). Merging again must change nothing, or a service's
// routes changed without the document following.
func TestDocumentIsTheMergeOfEveryFragment(t *testing.T) {
	paths, err := filepath.Glob("../*/openapi-fragment.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fragments found: %v", err)
	}
	doc := document(t)
	var frags []openapi.Fragment
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d openapi.Doc
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		frags = append(frags, openapi.Fragment{Name: p, Doc: d})
	}
	if err := openapi.Merge(doc, frags...); err != nil {
		t.Fatal(err)
	}
	merged, err := openapi.Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged, OpenAPI) {
		t.Fatal("openapi.json is not the merge of the services' fragments: run `make openapi`")
	}
}
