package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tori.dev/contract/names"
)

// The committed copy is what the contract makes now: a rule changed in the contract and not
// regenerated (or the copy edited by hand) fails here.
func TestTheConsolesCopyIsGenerated(t *testing.T) {
	got, err := os.ReadFile(consoleCopy)
	if err != nil {
		t.Fatal(err)
	}
	if want := render(); !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the contract makes; run `make generate`.\ngot:\n%s\nwant:\n%s", consoleCopy, got, want)
	}
}

// The copy, run by Node as the browser runs it, takes exactly the names the contract takes:
// each anchored pattern as a RegExp, and each input pattern as a browser compiles an <input
// pattern> (anchored, with the v flag), within its maximum length.
func TestTheConsolesRulesAreTheContracts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is missing: the suite installs it (scripts/ensure-browser.sh)")
	}
	rules := []struct {
		name   string // the constants' stem in the copy
		valid  func(string) bool
		maxLen int
		cases  []string
	}{
		{"slug", names.ValidSlug, names.SlugMaxLen, []string{"a", "my-app", "-abc", "abc-", "0", strings.Repeat("a", 63),
			strings.Repeat("a", 64), "", "My-App", "my_app", "my.app", "my app", "é", "a\nb"}},
		{"envKey", names.ValidEnvKey, names.EnvKeyMaxLen, []string{"A", "DATABASE_URL", "X1_2", "A" + strings.Repeat("B", 255),
			"A" + strings.Repeat("B", 256), "", "_A", "1A", "database_url", "A-B", "A B", "A\n"}},
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "contract.mjs"), render(), 0o644); err != nil { // the TypeScript is plain JavaScript
		t.Fatal(err)
	}
	for _, r := range rules {
		in, _ := json.Marshal(r.cases)
		script := `import * as c from './contract.mjs'
const cases = ` + string(in) + `
const whole = new RegExp(c.` + r.name + `Pattern), input = new RegExp('^(?:' + c.` + r.name + `InputPattern + ')$', 'v')
const max = c.` + r.name + `MaxLength
console.log(JSON.stringify({ max, whole: cases.map((s) => whole.test(s) && s.length <= max), input: cases.map((s) => input.test(s) && s.length <= max) }))
`
		check := filepath.Join(dir, r.name+".mjs")
		if err := os.WriteFile(check, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(node, check).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: node: %v\n%s", r.name, err, out)
		}
		var got struct {
			Max          int
			Whole, Input []bool
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v: %s", r.name, err, out)
		}
		if got.Max != r.maxLen {
			t.Errorf("%sMaxLength %d, want %d", r.name, got.Max, r.maxLen)
		}
		for i, s := range r.cases {
			if want := r.valid(s); got.Whole[i] != want || got.Input[i] != want {
				t.Errorf("%s %q: the console's pattern %v, its input pattern %v; the contract %v", r.name, s, got.Whole[i], got.Input[i], want)
			}
		}
	}
}
