package deploy

import (
	"errors"
	"strings"
	"testing"
)

// decisions.md: static until a package.json depends on vite, next, astro or @sveltejs/kit;
// with several, the most specific wins (next, astro, @sveltejs/kit, then vite).
func TestDetectFramework(t *testing.T) {
	for _, tc := range []struct {
		name   string
		json   string
		want   Framework
		broken bool
	}{
		{"vite in devDependencies", `{"devDependencies": {"vite": "^5.4.0"}}`, FrameworkVite, false},
		{"vite in dependencies", `{"dependencies": {"vite": "5.4.0"}}`, FrameworkVite, false},
		{"next", `{"dependencies": {"next": "15.0.0", "react": "19.0.0"}}`, FrameworkNext, false},
		{"astro", `{"dependencies": {"astro": "^4"}}`, FrameworkAstro, false},
		{"sveltekit", `{"devDependencies": {"@sveltejs/kit": "^2", "svelte": "^5"}}`, FrameworkSvelteKit, false},
		{"sveltekit over the vite it builds on", `{"devDependencies": {"vite": "^5", "@sveltejs/kit": "^2"}}`, FrameworkSvelteKit, false},
		{"astro over vite across the two lists", `{"dependencies": {"astro": "^4"}, "devDependencies": {"vite": "^5"}}`, FrameworkAstro, false},
		{"astro over sveltekit", `{"dependencies": {"@sveltejs/kit": "^2", "astro": "^4"}}`, FrameworkAstro, false},
		{"next over everything", `{"dependencies": {"vite": "1", "astro": "1", "@sveltejs/kit": "1"}, "devDependencies": {"next": "1"}}`, FrameworkNext, false},
		{"no framework dependency", `{"name": "site", "dependencies": {"react": "^18"}}`, FrameworkStatic, false},
		{"empty object", `{}`, FrameworkStatic, false},
		{"null lists", `{"dependencies": null, "devDependencies": null}`, FrameworkStatic, false},
		{"peerDependencies do not count", `{"peerDependencies": {"vite": "^5"}}`, FrameworkStatic, false},
		{"a name alone does not count", `{"name": "vite"}`, FrameworkStatic, false},
		{"a near name does not count", `{"dependencies": {"vitest": "^1", "@vitejs/plugin-react": "^4", "next-auth": "^4"}}`, FrameworkStatic, false},
		{"names are exact", `{"dependencies": {"Vite": "^5"}}`, FrameworkStatic, false},
		{"a BOM is read past", "\xEF\xBB\xBF{\"devDependencies\": {\"vite\": \"^5\"}}", FrameworkVite, false},
		{"surrounding whitespace", "\n  {\"dependencies\": {\"next\": \"15\"}}\n", FrameworkNext, false},

		{"not JSON", `{"dependencies": {"vite": "^5"`, FrameworkStatic, true},
		{"trailing data", `{"dependencies": {"vite": "^5"}} {}`, FrameworkStatic, true},
		{"an array", `[{"dependencies": {"vite": "^5"}}]`, FrameworkStatic, true},
		{"null", `null`, FrameworkStatic, true},
		{"empty", ``, FrameworkStatic, true},
		{"a version that is not a string", `{"dependencies": {"vite": 5}}`, FrameworkStatic, true},
		{"a list that is not an object", `{"dependencies": ["vite"]}`, FrameworkStatic, true},
		{"not UTF-8", "{\"dependencies\": {\"vite\": \"\xff\"}}", FrameworkStatic, true},
		{"comments are not JSON", "{// build\n\"dependencies\": {\"vite\": \"^5\"}}", FrameworkStatic, true},
		{"over the size bound", `{"dependencies": {"vite": "^5"}, "description": "` + strings.Repeat("x", MaxPackageJSONBytes) + `"}`, FrameworkStatic, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DetectFramework([]byte(tc.json))
			if got != tc.want {
				t.Errorf("framework %q, want %q", got, tc.want)
			}
			if tc.broken != (err != nil) {
				t.Fatalf("err %v, want broken=%v", err, tc.broken)
			}
			if err != nil && !errors.Is(err, ErrBrokenPackageJSON) {
				t.Errorf("%v is not ErrBrokenPackageJSON", err)
			}
		})
	}
}

// The reason logged for a broken package.json never quotes the file: a package name or a
// value is the customer's.
func TestBrokenPackageJSONReasonQuotesNothing(t *testing.T) {
	for _, in := range []string{
		`{"dependencies": {"secret-pkg": 5}}`,
		`{"dependencies": {"secret-pkg": "^1"} secret}`,
		`secret`,
	} {
		_, err := DetectFramework([]byte(in))
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", in, err)
		}
	}
}
