package httpapi_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
)

// The OpenAPI fragment is what clients read; these tests keep it and the handlers in step.

type fragment struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type schema struct {
	Ref        string             `json:"$ref"`
	Type       any                `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
	OneOf      []*schema          `json:"oneOf"`
	Enum       []any              `json:"enum"`
	Const      any                `json:"const"`
}

func loadFragment(t *testing.T) fragment {
	t.Helper()
	b, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fragment
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("openapi-fragment.json: %v", err)
	}
	return f
}

func TestFragmentDocumentsExactlyTheAPIRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var served []string
	for _, r := range f.app.GetRoutes(true) {
		if strings.HasPrefix(r.Path, "/api/") && (r.Method == "GET" || r.Method == "POST") {
			served = append(served, r.Method+" "+r.Path)
		}
	}
	var documented []string
	for path, ops := range loadFragment(t).Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if !slices.Equal(served, documented) {
		t.Fatalf("served %v\ndocumented %v", served, documented)
	}
}

func TestResponsesMatchTheFragmentsSchemas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	doc := loadFragment(t)
	user := userOf(f.account(t))
	cases := []struct {
		method, path string
		caller       callerid.Caller
		schema       string
	}{
		{"GET", "/api/plans", callerid.Caller{}, "PlanCatalog"},
		{"GET", "/api/billing", user, "BillingState"},
		{"POST", "/api/billing/sync", userOf(uuid.Must(uuid.NewV7())), "BillingState"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			status, body := do(t, f.app, request(tc.method, tc.path, "", tc.caller, key))
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			var v any
			if err := json.Unmarshal([]byte(body), &v); err != nil {
				t.Fatal(err)
			}
			if err := conforms(doc, &schema{Ref: "#/components/schemas/" + tc.schema}, v, "$"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// conforms checks v against s, strictly: an object must have exactly the properties the
// schema lists, so a field added to or dropped from a response shows up here.
func conforms(doc fragment, s *schema, v any, at string) error {
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
		target, ok := doc.Components.Schemas[name]
		if !ok {
			return fmt.Errorf("%s: $ref to undefined schema %s", at, s.Ref)
		}
		return conforms(doc, target, v, at)
	}
	if len(s.OneOf) > 0 {
		var errs []string
		for _, alt := range s.OneOf {
			err := conforms(doc, alt, v, at)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: matches no alternative: %s", at, strings.Join(errs, "; "))
	}
	if s.Const != nil && v != s.Const {
		return fmt.Errorf("%s: %v, want const %v", at, v, s.Const)
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		return fmt.Errorf("%s: %v not in %v", at, v, s.Enum)
	}
	switch s.Type {
	case "null":
		if v != nil {
			return fmt.Errorf("%s: %v, want null", at, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v, want a string", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v, want a boolean", at, v)
		}
	case "number", "integer":
		n, ok := v.(float64)
		if !ok || (s.Type == "integer" && n != float64(int64(n))) {
			return fmt.Errorf("%s: %v, want a %s", at, v, s.Type)
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v, want an array", at, v)
		}
		for i, item := range items {
			if err := conforms(doc, s.Items, item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v, want an object", at, v)
		}
		for name := range obj {
			if _, ok := s.Properties[name]; !ok {
				return fmt.Errorf("%s: property %q is not documented", at, name)
			}
		}
		for _, name := range s.Required {
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("%s: required property %q is missing", at, name)
			}
		}
		for name, prop := range s.Properties {
			if val, ok := obj[name]; ok {
				if err := conforms(doc, prop, val, at+"."+name); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("%s: schema without a type the test knows: %v", at, s.Type)
	}
	return nil
}
