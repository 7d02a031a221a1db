package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"tori.dev/contract/names"
)

// The OpenAPI documents describe the contract to clients (the console's types are generated
// from the gateway's), so each pattern they give a name is the contract's, character for
// character: a slug pattern drifting there would have a client refuse, or send, what the
// services do not.
func TestTheOpenAPIDocumentsPatternsAreTheContracts(t *testing.T) {
	contract := map[string]bool{
		names.SlugPattern:              true,
		names.EnvKeyPattern:            true,
		names.ProcessNamePattern:       true,
		names.ProcessFilterPattern:     true,
		names.PreviewNamePattern:       true,
		names.PreviewIDPattern:         true,
		"^" + names.SessionTokenPrefix: true,
		"^" + names.APITokenPrefix:     true,
	}
	// Patterns of rules one service alone holds: not the contract's to write.
	own := map[string]bool{
		`^[0-9]+$`:   true, // a log line's id
		`^[A-Z]{2}$`: true, // billing's country
		`^[BCDFGHJKMNPQRSTVWXYZ2345679]{4}-[BCDFGHJKMNPQRSTVWXYZ2345679]{4}$`: true, // identity's device user code
		`^[^/@\s]+(/[^@\s]+)+@sha256:[0-9a-f]{64}$`:                           true, // deploys' image reference
	}
	docs, err := filepath.Glob("../../services/*/openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, "../../services/gateway/openapi.json")
	seen := map[string]bool{}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, p := range patterns(v) {
			seen[p] = true
			if !contract[p] && !own[p] {
				t.Errorf("%s: pattern %q is neither the contract's nor a service's own", doc, p)
			}
		}
	}
	for p := range contract {
		if !seen[p] {
			t.Errorf("no OpenAPI document gives the contract's %q: a name's schema lost its pattern", p)
		}
	}
}

// patterns is every "pattern" string in a decoded JSON document.
func patterns(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "pattern" {
				out = append(out, s)
				continue
			}
			out = append(out, patterns(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, patterns(e)...)
		}
	}
	return out
}
