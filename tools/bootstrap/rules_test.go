package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/rules.md names, for each rule of the contract and decisions, the file and function
// that enforce it and the test that shows it. These tests keep it true: every named file
// exists, every named Go function, method, type, variable or constant is declared in that
// file, and every rule line names at least one place that enforces it and one test.

// ruleRef is a code span naming a place: `path/to/file.go:Symbol` (Symbol a function, a
// method as Type.Method, a type, a variable or a constant) or a bare `path/to/file` (a file
// that is not Go, such as an OpenAPI document) or `Makefile`. A path has a folder, so prose
// such as `tori.json` is not taken for a place.
var ruleRef = regexp.MustCompile("`((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\\.(?:go|json|ya?ml|sh|sql|mjs|js|ts|svelte|conf)|Makefile)(?::([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?))?`")

// ruleLines are docs/rules.md's rule lines (those starting "- "), by their line number.
func ruleLines(t *testing.T) map[int]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs/rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "- ") {
			out[i+1] = line
		}
	}
	return out
}

func TestRulesNameFilesAndFunctionsThatExist(t *testing.T) {
	rules := 0
	for n, line := range ruleLines(t) {
		rules++
		if err := checkRuleLine(root, line); err != nil {
			t.Errorf("docs/rules.md:%d: %v", n, err)
		}
	}
	if rules < 50 {
		t.Fatalf("docs/rules.md lists %d rules; the contract and decisions have far more", rules)
	}
}

// checkRuleLine checks one rule line against the repository at dir: it names at least one
// place that enforces the rule and one test, and each exists.
func checkRuleLine(dir, line string) error {
	var enforcers, tests int
	var errs []error
	for _, m := range ruleRef.FindAllStringSubmatch(line, -1) {
		path, symbol := m[1], m[2]
		isTest := strings.HasSuffix(path, "_test.go")
		if isTest {
			tests++
		} else {
			enforcers++
		}
		if err := checkRef(dir, path, symbol, isTest); err != nil {
			errs = append(errs, err)
		}
	}
	if enforcers == 0 {
		errs = append(errs, errors.New("names no file that enforces the rule"))
	}
	if tests == 0 {
		errs = append(errs, errors.New("names no test that shows the rule"))
	}
	return errors.Join(errs...)
}

func checkRef(dir, path, symbol string, isTest bool) error {
	full := filepath.Join(dir, filepath.FromSlash(path))
	if _, err := os.Stat(full); err != nil {
		return fmt.Errorf("%s: no such file", path)
	}
	if !strings.HasSuffix(path, ".go") {
		if symbol != "" {
			return fmt.Errorf("%s:%s: only Go files name a symbol", path, symbol)
		}
		return nil
	}
	if symbol == "" {
		return fmt.Errorf("%s: name the function that enforces the rule (path:Function)", path)
	}
	if isTest && !strings.HasPrefix(symbol, "Test") && !strings.HasPrefix(symbol, "Benchmark") && !strings.HasPrefix(symbol, "Fuzz") {
		return fmt.Errorf("%s:%s: a test file's entry names a Test, Benchmark or Fuzz function", path, symbol)
	}
	declared, err := goDeclarations(full)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !declared[symbol] {
		return fmt.Errorf("%s:%s: not declared in that file", path, symbol)
	}
	return nil
}

// goDeclarations is every top-level name a Go file declares: functions, methods as
// Type.Method, types, variables and constants.
func goDeclarations(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = receiverType(d.Recv.List[0].Type) + "." + name
			}
			names[name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names, nil
}

func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr: // a generic receiver, T[K]
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// The checker itself: a rule line passes only when every place it names exists and it names
// both an enforcer and a test.
func TestCheckRuleLine(t *testing.T) {
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
	write("svc/rule.go", "package svc\n\ntype Hold struct{}\n\nfunc (h *Hold) StageAt() {}\n\nfunc Check() {}\n\nvar reserved = 1\n")
	write("svc/rule_test.go", "package svc\n\nimport \"testing\"\n\nfunc TestCheck(t *testing.T) {}\n\nfunc helper() {}\n")
	write("Makefile", "all:\n")
	write("svc/openapi.json", "{}\n")
	for _, tc := range []struct {
		line string
		want string // a part of the error; "" for none
	}{
		{"- a rule — `svc/rule.go:Check`, shown by `svc/rule_test.go:TestCheck`", ""},
		{"- a method — `svc/rule.go:Hold.StageAt`, `svc/rule.go:reserved`; `svc/rule_test.go:TestCheck`", ""},
		{"- a Makefile target — `Makefile`; `svc/rule_test.go:TestCheck`", ""},
		{"- a document — `svc/openapi.json`, read from `tori.json`; `svc/rule_test.go:TestCheck`", ""},
		{"- gone — `svc/gone.go:Check`; `svc/rule_test.go:TestCheck`", "no such file"},
		{"- renamed — `svc/rule.go:Checked`; `svc/rule_test.go:TestCheck`", "not declared"},
		{"- wrong receiver — `svc/rule.go:Other.StageAt`; `svc/rule_test.go:TestCheck`", "not declared"},
		{"- no function — `svc/rule.go`; `svc/rule_test.go:TestCheck`", "name the function"},
		{"- a helper is no test — `svc/rule.go:Check`; `svc/rule_test.go:helper`", "names a Test"},
		{"- no test — `svc/rule.go:Check`", "no test"},
		{"- no enforcer — `svc/rule_test.go:TestCheck`", "no file that enforces"},
	} {
		err := checkRuleLine(dir, tc.line)
		if tc.want == "" && err != nil {
			t.Errorf("%s: %v", tc.line, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want an error saying %q", tc.line, err, tc.want)
		}
	}
}
