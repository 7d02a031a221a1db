package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// A rule that crosses a process boundary is written once, in the contract module
// (contract/), and every process imports it. rules.md names that place; these tests hold the
// code to it: the literal a named constant or variable of the contract is written with (the
// slug's pattern, a notice's name, a refused range) appears in no other source file, and a
// named constant whose value is a number (a limit) is declared under its name nowhere else.
// A copy, however right today, is how the slug's pattern once drifted between apps and
// identity (#37).
//
// Tests may spell a value to check it (a _test.go file, a .test. script, the folders of
// tests), and a generated file ("Code generated ... DO NOT EDIT.", such as the console's copy,
// or the console's types generated from the OpenAPI document) is written from the contract or
// its documents, so neither counts. A literal made of letters alone ("private") is a word, not
// a rule, and is not searched for. The OpenAPI documents, which describe the contract to
// clients, are JSON and not searched here: tools/contractgen's test holds their patterns to it.

// contractPrefix is where a rule's literal may be written.
const contractPrefix = "contract/"

// sourceExts are the files searched for a copy: the code of every process and the scripts.
var sourceExts = map[string]bool{".go": true, ".ts": true, ".tsx": true, ".js": true, ".mjs": true, ".svelte": true, ".sh": true}

// skippedDirs hold no code of the project's own, or only tests (tests/, the console's browser
// test in console/e2e).
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "dist": true, "bin": true, "testdata": true, "tests": true, "e2e": true}

// knownCopies are the copies that stay, each with why: a file listed here may write the
// literal, and no other may. Each is a debt, not a precedent.
var knownCopies = map[string]string{
	// Fills pg_hba.conf's zone section on a cluster's first start, before any zone agent runs,
	// with pkg/pgstore/zonehba.go's query: SQL in a shell script cannot import Go.
	"scripts/zone-postgres.sh": "^db_[0-9a-f]{32}$",
}

// generatedMarker is Go's convention for a generated file, which the console's copy follows,
// or the header of the console's OpenAPI types (openapi-typescript's, "auto-generated").
var generatedMarker = regexp.MustCompile(`(?m)^(//|#) Code generated .* DO NOT EDIT\.$|^\s*\*?\s*This file was auto-generated`)

// contractRule is what a rule line names in the contract: the literals its declarations are
// written with, each with the folder of the package that declares it (the one place it may
// be written), and the names of those whose value is no literal (a number, a duration), each
// with the file that declares it.
type contractRule struct {
	literals map[string]string
	names    map[string]string
}

func TestContractRulesAreWrittenOnlyInTheContract(t *testing.T) {
	named := 0
	for n, line := range ruleLines(t) {
		rule, err := contractRuleOf(root, line)
		if err != nil {
			t.Errorf("docs/rules.md:%d: %v", n, err)
			continue
		}
		if len(rule.literals)+len(rule.names) == 0 {
			continue
		}
		named++
		for _, err := range findCopies(root, rule) {
			t.Errorf("docs/rules.md:%d: %v", n, err)
		}
	}
	// The slug's pattern, the release limit, the hold's names, the time format and the
	// refused ranges at least.
	if named < 5 {
		t.Fatalf("docs/rules.md names %d rules in the contract module; want the slug, the release limit, the hold, the time format and the refused ranges", named)
	}
}

// contractRuleOf collects, from the contract's constants and variables a rule line names,
// their literals and the names of those without one.
func contractRuleOf(dir, line string) (contractRule, error) {
	rule := contractRule{literals: map[string]string{}, names: map[string]string{}}
	for _, m := range ruleRef.FindAllStringSubmatch(line, -1) {
		path, symbol := m[1], m[2]
		if !strings.HasPrefix(path, contractPrefix) || strings.HasSuffix(path, "_test.go") || symbol == "" || strings.Contains(symbol, ".") {
			continue
		}
		spec, err := valueSpec(filepath.Join(dir, filepath.FromSlash(path)), symbol)
		if err != nil {
			return rule, fmt.Errorf("%s:%s: %w", path, symbol, err)
		}
		if spec == nil { // a function or a type: nothing written to copy
			continue
		}
		found := false
		ast.Inspect(spec, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && !isWord(v) {
					rule.literals[v] = filepath.Dir(path)
					found = true
				}
			}
			return true
		})
		if !found {
			rule.names[symbol] = path
		}
	}
	return rule, nil
}

// valueSpec is the declaration of the constant or variable symbol in the Go file at path, nil
// for a function or a type.
func valueSpec(path, symbol string) (*ast.ValueSpec, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			if v, ok := s.(*ast.ValueSpec); ok {
				for _, n := range v.Names {
					if n.Name == symbol {
						return v, nil
					}
				}
			}
		}
	}
	return nil, nil
}

func isWord(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// findCopies is every place that writes one of rule's literals outside the folder that
// declares it, or declares a constant or variable by one of its names in another file.
func findCopies(dir string, rule contractRule) []error {
	var errs []error
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, file)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(file)
		if !sourceExts[ext] || isTestFile(d.Name()) {
			return nil
		}
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if generatedMarker.Match(src[:min(len(src), 512)]) {
			return nil
		}
		if ext == ".go" {
			errs = append(errs, goCopies(rel, src, rule)...)
			return nil
		}
		for lit, at := range rule.literals {
			if knownCopies[rel] == lit {
				continue
			}
			for _, q := range []string{`"`, `'`, "`", "/"} {
				if at != path.Dir(rel) && bytes.Contains(src, []byte(q+lit+q)) {
					errs = append(errs, fmt.Errorf("%s writes %q, which is %s's to write: use it from there", rel, lit, at))
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

func isTestFile(name string) bool {
	return strings.HasSuffix(name, "_test.go") || strings.Contains(name, ".test.") || strings.Contains(name, ".spec.")
}

// goCopies is every string literal of src equal to one of rule's, and every top-level
// constant or variable named as one of its names.
func goCopies(rel string, src []byte, rule contractRule) []error {
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", rel, err)}
	}
	var errs []error
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(n.Value); err == nil && rule.literals[v] != "" && rule.literals[v] != path.Dir(rel) {
				errs = append(errs, fmt.Errorf("%s writes %q, which is %s's to write: use it from there", rel, v, rule.literals[v]))
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				if at, ok := rule.names[name.Name]; ok && at != rel {
					errs = append(errs, fmt.Errorf("%s declares %s again: use %s's", rel, name.Name, at))
				}
			}
		}
		return true
	})
	return errs
}

// The checker itself: a copy of a literal or a second declaration of a limit is found in any
// source file outside the contract's package, and nowhere else.
func TestFindCopies(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("contract/names/names.go", "package names\n\nimport \"time\"\n\nconst SlugPattern = `^[a-z]{1,3}$`\n\n"+
		"const Limit = 10 * time.Minute\n\nvar Kinds = []string{\"private\", \"a-b\"}\n\nfunc ValidSlug() {}\n")
	write("contract/names/names_test.go", "package names\n\nconst want = `^[a-z]{1,3}$`\n")
	line := "- a rule — `contract/names/names.go:SlugPattern`, `contract/names/names.go:Limit`, `contract/names/names.go:Kinds`, " +
		"`contract/names/names.go:ValidSlug`; `contract/names/names_test.go:TestSlugs`"
	rule, err := contractRuleOf(dir, line)
	if err != nil {
		t.Fatal(err)
	}
	if len(rule.literals) != 2 || rule.literals["^[a-z]{1,3}$"] != "contract/names" || rule.literals["a-b"] != "contract/names" ||
		len(rule.names) != 1 || rule.names["Limit"] != "contract/names/names.go" {
		t.Fatalf("rule %+v: want the pattern and a-b (not the word private), and Limit by name", rule)
	}
	if errs := findCopies(dir, rule); len(errs) != 0 {
		t.Fatalf("only the contract and its tests: %v", errs)
	}
	for _, tc := range []struct {
		file, body string
		want       string // a part of the error; "" for none
	}{
		{"svc/slug.go", "package svc\n\nimport \"regexp\"\n\nvar re = regexp.MustCompile(`^[a-z]{1,3}$`)\n", "svc/slug.go writes"},
		{"svc/kinds.go", "package svc\n\nvar k = \"a-b\"\n", "svc/kinds.go writes"},
		{"svc/words.go", "package svc\n\nvar k = \"private\"\n", ""},
		{"svc/limit.go", "package svc\n\nimport \"time\"\n\nconst Limit = 10 * time.Minute\n", "svc/limit.go declares Limit"},
		{"svc/uses.go", "package svc\n\nimport \"x/contract/names\"\n\nvar l = names.Limit\n", ""},
		{"svc/slug_test.go", "package svc\n\nconst p = `^[a-z]{1,3}$`\n", ""},
		{"web/src/form.tsx", "export const p = /^[a-z]{1,3}$/;\n", "web/src/form.tsx writes"},
		{"web/src/form.ts", "export const p = \"^[a-z]{1,3}$\";\n", "web/src/form.ts writes"},
		{"web/src/contract.ts", "// Code generated by contractgen. DO NOT EDIT.\nexport const p = \"^[a-z]{1,3}$\";\n", ""},
		{"web/node_modules/x/index.js", "module.exports = \"^[a-z]{1,3}$\";\n", ""},
		{"web/src/schema.d.ts", "/**\n * This file was auto-generated by openapi-typescript.\n */\nexport type p = \"^[a-z]{1,3}$\";\n", ""},
		{"web/e2e/browser.mjs", "const p = '^[a-z]{1,3}$'\n", ""},
		{"docs/rules.md", "`^[a-z]{1,3}$`\n", ""},
	} {
		write(tc.file, tc.body)
		errs := errors.Join(findCopies(dir, rule)...)
		if tc.want == "" && errs != nil {
			t.Errorf("%s: %v, want no copy", tc.file, errs)
		}
		if tc.want != "" && (errs == nil || !strings.Contains(errs.Error(), tc.want)) {
			t.Errorf("%s: %v, want an error saying %q", tc.file, errs, tc.want)
		}
		if err := os.Remove(filepath.Join(dir, tc.file)); err != nil {
			t.Fatal(err)
		}
	}
}
