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

// The copy, run by Node as the browser runs it, takes exactly the slugs the contract takes:
// the anchored pattern as a RegExp, and the input pattern as a browser compiles an <input
// pattern> (anchored, with the v flag).
func TestTheConsolesSlugRuleIsTheContracts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is missing: the suite installs it (scripts/ensure-browser.sh)")
	}
	slugs := []string{"a", "my-app", "-abc", "abc-", "0", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"", "My-App", "my_app", "my.app", "my app", "é", "a\nb"}
	dir := t.TempDir()
	copyJS := filepath.Join(dir, "contract.mjs")
	if err := os.WriteFile(copyJS, render(), 0o644); err != nil { // the TypeScript is plain JavaScript
		t.Fatal(err)
	}
	in, _ := json.Marshal(slugs)
	script := `import { slugPattern, slugInputPattern, slugMaxLength } from './contract.mjs'
const slugs = ` + string(in) + `
const whole = new RegExp(slugPattern), input = new RegExp('^(?:' + slugInputPattern + ')$', 'v')
console.log(JSON.stringify({ max: slugMaxLength, whole: slugs.map((s) => whole.test(s)), input: slugs.map((s) => input.test(s)) }))
`
	if err := os.WriteFile(filepath.Join(dir, "check.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "check.mjs")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Max          int
		Whole, Input []bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Max != names.SlugMaxLen {
		t.Errorf("slugMaxLength %d, want %d", got.Max, names.SlugMaxLen)
	}
	for i, s := range slugs {
		want := names.ValidSlug(s)
		if got.Whole[i] != want || got.Input[i] != want {
			t.Errorf("%q: the console's pattern %v, its input pattern %v; the contract %v", s, got.Whole[i], got.Input[i], want)
		}
	}
}
