package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func parse(t *testing.T, s string) Doc {
	t.Helper()
	var d Doc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

const base = `{
  "openapi": "3.1.0",
  "tags": [{"name": "account"}],
  "paths": {
    "/api/account": {"get": {"tags": ["account"], "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/OldAccount"}}}}}}},
    "/api/plans": {"get": {"security": [], "responses": {"200": {"description": "x"}}}}
  },
  "components": {
    "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
    "responses": {
      "Unauthorized": {"description": "u"}, "RateLimited": {"description": "r"},
      "SlowDown": {"description": "s"}, "ServiceUnavailable": {"description": "b"},
      "IdempotencyConflict": {"description": "i"}
    },
    "schemas": {"Error": {"type": "object", "properties": {"hold": {}}}, "OldAccount": {"type": "object"}}
  }
}`

const identity = `{
  "paths": {
    "/api/account": {"get": {"tags": ["identity"], "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}}, "401": {"description": "mine"}}}},
    "/api/auth/cli/token": {"post": {"security": [], "responses": {"200": {"description": "ok"}}}}
  },
  "components": {"schemas": {"Account": {"type": "object", "properties": {"e": {"$ref": "#/components/schemas/Error"}}}, "Error": {"type": "object"}}}
}`

func TestMergeReplacesPathsDecoratesAndPrunes(t *testing.T) {
	doc := parse(t, base)
	if err := Merge(doc, Fragment{Name: "identity", Doc: parse(t, identity)}); err != nil {
		t.Fatal(err)
	}
	out, err := Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)

	paths := doc["paths"].(map[string]any)
	account := paths["/api/account"].(map[string]any)["get"].(map[string]any)
	rs := account["responses"].(map[string]any)
	if d, _ := rs["401"].(map[string]any)["description"].(string); !strings.HasPrefix(d, "mine") || strings.Count(d, "token_expired") != 1 {
		t.Fatalf("a service's own 401 must be kept, with token_expired added once: %q", d)
	}
	for _, code := range []string{"429", "503"} {
		if _, ok := rs[code]; !ok {
			t.Fatalf("GET /api/account lacks the gateway's %s", code)
		}
	}
	token := paths["/api/auth/cli/token"].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)
	if token["429"].(map[string]any)["$ref"] != "#/components/responses/SlowDown" {
		t.Fatalf("token exchange 429: %v", token["429"])
	}
	if _, ok := token["401"]; ok {
		t.Fatal("a public operation got a 401")
	}
	plans := paths["/api/plans"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	if _, ok := plans["429"]; ok {
		t.Fatal("a public operation without a bucket got a 429")
	}

	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	if _, ok := schemas["OldAccount"]; ok {
		t.Fatal("a schema nothing uses any more was kept")
	}
	if _, ok := schemas["Error"].(map[string]any)["properties"]; !ok {
		t.Fatal("the gateway's shared Error was replaced by a fragment's")
	}
	if !strings.Contains(s, `"name": "identity"`) || !strings.Contains(s, `"name": "account"`) {
		t.Fatalf("tags not collected: %v", doc["tags"])
	}

	// Merging the result again with the same fragment changes nothing.
	again := parse(t, s)
	if err := Merge(again, Fragment{Name: "identity", Doc: parse(t, identity)}); err != nil {
		t.Fatal(err)
	}
	out2, _ := Encode(again)
	if string(out2) != s {
		t.Fatal("merge is not idempotent")
	}
}

func TestFragmentsThatDisagreeAreAnError(t *testing.T) {
	a := parse(t, `{"components": {"schemas": {"Plan": {"type": "object"}}}}`)
	b := parse(t, `{"components": {"schemas": {"Plan": {"type": "string"}}}}`)
	err := Merge(parse(t, base), Fragment{Name: "a", Doc: a}, Fragment{Name: "b", Doc: b})
	if err == nil || !strings.Contains(err.Error(), "schemas/Plan") {
		t.Fatalf("err %v", err)
	}
	p := parse(t, `{"paths": {"/api/x": {}}}`)
	err = Merge(parse(t, base), Fragment{Name: "a", Doc: p}, Fragment{Name: "b", Doc: p})
	if err == nil || !strings.Contains(err.Error(), "/api/x") {
		t.Fatalf("err %v", err)
	}
}

func TestEncodeKeepsAngleBrackets(t *testing.T) {
	out, err := Encode(Doc{"d": "Bearer <token> & co"})
	if err != nil || !strings.Contains(string(out), "Bearer <token> & co") {
		t.Fatalf("%s %v", out, err)
	}
}

// An earlier document's 502 becomes the gateway's 503; every POST takes Idempotency-Key and
// documents its 409s, and a service's own 409 gets the gateway's conditions added once.
func TestMergeDocumentsUnavailableAndIdempotency(t *testing.T) {
	doc := parse(t, `{
	  "paths": {
	    "/api/plans": {"get": {"security": [], "responses": {"502": {"$ref": "#/components/responses/BadGateway"}}}},
	    "/api/tokens": {"post": {"responses": {"201": {"description": "made"}}}},
	    "/api/apps": {"post": {"parameters": [{"name": "X", "in": "header"}], "responses": {"409": {"description": "slug taken."}}}}
	  },
	  "components": {"responses": {"BadGateway": {"description": "b"}, "ServiceUnavailable": {"description": "s"},
	    "IdempotencyConflict": {"description": "i"}, "Unauthorized": {"description": "u"}, "RateLimited": {"description": "r"}},
	    "parameters": {"IdempotencyKey": {"name": "Idempotency-Key", "in": "header"}}}
	}`)
	for i := 0; i < 2; i++ { // twice: merging again changes nothing
		if err := Merge(doc); err != nil {
			t.Fatal(err)
		}
	}
	paths := doc["paths"].(map[string]any)
	plans := paths["/api/plans"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	if _, ok := plans["502"]; ok || plans["503"] == nil {
		t.Fatalf("plans responses %v", plans)
	}
	if _, ok := doc["components"].(map[string]any)["responses"].(map[string]any)["BadGateway"]; ok {
		t.Fatal("BadGateway kept with nothing referring to it")
	}
	tokens := paths["/api/tokens"].(map[string]any)["post"].(map[string]any)
	if tokens["responses"].(map[string]any)["409"].(map[string]any)["$ref"] != "#/components/responses/IdempotencyConflict" {
		t.Fatalf("tokens 409: %v", tokens["responses"])
	}
	if ps := tokens["parameters"].([]any); len(ps) != 1 {
		t.Fatalf("tokens parameters %v", ps)
	}
	apps := paths["/api/apps"].(map[string]any)["post"].(map[string]any)
	if ps := apps["parameters"].([]any); len(ps) != 2 {
		t.Fatalf("apps parameters %v", ps)
	}
	d := apps["responses"].(map[string]any)["409"].(map[string]any)["description"].(string)
	if !strings.HasPrefix(d, "slug taken.") || strings.Count(d, "idempotency_key_reused") != 1 || !strings.Contains(d, "request_in_progress") {
		t.Fatalf("apps 409: %q", d)
	}
}

// Each authenticated operation gets its entry of contract/access: extensions, one closing
// sentence (replaced, not repeated, when merged again or when the table changed), and the 403
// of a caller below it (a service's own 403 gets the access refusals added once).
func TestMergeShowsTheAccessTable(t *testing.T) {
	doc := parse(t, `{
	  "paths": {
	    "/api/apps/{slug}": {"delete": {"description": "Deletes.\n\nRequires role viewer and scope read.", "responses": {}}},
	    "/api/apps/{slug}/env": {"put": {"responses": {"403": {"description": "env_limit_reached."}}}},
	    "/api/auth/cli/approve": {"post": {"description": "Approve.", "x-tori-session-only": false, "responses": {}}},
	    "/api/tokens": {"get": {"description": "Lists.", "responses": {}}},
	    "/api/plans": {"get": {"security": [], "description": "Plans.", "responses": {}}}
	  },
	  "components": {"responses": {"ServiceUnavailable": {"description": "s"}, "Unauthorized": {"description": "u"},
	    "RateLimited": {"description": "r"}, "Forbidden": {"description": "f"}, "IdempotencyConflict": {"description": "i"}},
	    "parameters": {"IdempotencyKey": {"name": "Idempotency-Key", "in": "header"}}}
	}`)
	for range 2 {
		if err := Merge(doc); err != nil {
			t.Fatal(err)
		}
	}
	paths := doc["paths"].(map[string]any)
	op := func(p, m string) map[string]any { return paths[p].(map[string]any)[m].(map[string]any) }

	del := op("/api/apps/{slug}", "delete")
	if del[ExtRole] != "admin" || del[ExtScope] != "write" || del[ExtSessionOnly] != nil {
		t.Fatalf("DELETE app: %v %v %v", del[ExtRole], del[ExtScope], del[ExtSessionOnly])
	}
	if d := del["description"]; d != "Deletes.\n\nRequires role admin and scope write." {
		t.Fatalf("DELETE app description %q", d)
	}
	if del["responses"].(map[string]any)["403"].(map[string]any)["$ref"] != "#/components/responses/Forbidden" {
		t.Fatal("DELETE app: no 403")
	}
	put := op("/api/apps/{slug}/env", "put")
	if d := put["responses"].(map[string]any)["403"].(map[string]any)["description"].(string); !strings.HasPrefix(d, "env_limit_reached.") || strings.Count(d, "insufficient_role") != 1 {
		t.Fatalf("PUT env 403 %q", d)
	}
	if d := put["description"]; d != "Requires role developer and scope write." {
		t.Fatalf("PUT env description %q", d)
	}
	approve := op("/api/auth/cli/approve", "post")
	if approve[ExtSessionOnly] != true || approve[ExtRole] != NoRole || !strings.Contains(approve["description"].(string), "session_required") {
		t.Fatalf("approve: %v", approve)
	}
	list := op("/api/tokens", "get")
	if list[ExtRole] != NoRole || list[ExtScope] != "read" || list["description"] != "Lists.\n\nRequires scope read." {
		t.Fatalf("GET tokens: %v", list)
	}
	if _, ok := list["responses"].(map[string]any)["403"]; ok {
		t.Fatal("GET tokens refuses no valid caller, yet documents a 403")
	}
	plans := op("/api/plans", "get")
	if plans[ExtRole] != nil || plans[ExtScope] != nil || plans["description"] != "Plans." {
		t.Fatalf("a public operation got access: %v", plans)
	}
}
