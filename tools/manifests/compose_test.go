package manifests

import (
	"os"
	"testing"

	"github.com/compose-spec/compose-go/v2/schema"
	"gopkg.in/yaml.v3"
)

// docker-compose.yml validates against the compose specification's schema.
func TestComposeFileMatchesTheSpec(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("docker-compose.yml against the compose spec: %v", err)
	}
}

// The schema refuses what the specification does not have: the check is not a formality.
func TestComposeSchemaRefusesUnknownKeys(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal([]byte("services:\n  a:\n    image: x\n    helthcheck: {}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err == nil {
		t.Fatal("a misspelt service key passed")
	}
}
