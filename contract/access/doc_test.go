package access

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The table of docs/teams.md between these markers is RouteTable's output: the document
// shows the one table, not a copy typed by hand that drifts from it.
const (
	docBegin = "<!-- routes: generated from contract/access; TORI_UPDATE_DOCS=1 go test ./access rewrites it -->"
	docEnd   = "<!-- end routes -->"
)

// RouteTable renders the route table as Markdown, one row per route, in the table's order.
func RouteTable() string {
	var b strings.Builder
	b.WriteString("| route | least role | least token scope | audited as |\n|---|---|---|---|\n")
	for _, r := range All() {
		role := r.Role.String()
		switch {
		case r.Locator == Personal:
			role = "(your own)"
		case r.Locator == MemberTeams:
			role = "(any member)"
		}
		scope := r.Scope.String()
		if r.Scope == FullScope {
			scope = "full token or session"
		}
		if r.SessionOnly {
			scope = "session only"
		}
		action := r.Action
		if action == "" {
			action = "-"
		} else {
			action = "`" + action + "`"
		}
		b.WriteString("| `" + r.Method + " " + r.Template + "` | " + role + " | " + scope + " | " + action + " |\n")
	}
	return b.String()
}

func TestTeamsDocShowsTheRouteTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "teams.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q section", path, docBegin, docEnd)
	}
	want := RouteTable()
	got := doc[i+len(docBegin)+1 : j]
	if got == want {
		return
	}
	if os.Getenv("TORI_UPDATE_DOCS") == "1" {
		doc = doc[:i+len(docBegin)+1] + want + doc[j:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's route table differs from contract/access; run TORI_UPDATE_DOCS=1 go test ./access in contract/", path)
}

// The rendering must name every route once, or the check above proves nothing.
func TestRouteTableNamesEveryRoute(t *testing.T) {
	table := RouteTable()
	for _, r := range All() {
		if n := strings.Count(table, "| `"+r.Method+" "+r.Template+"` |"); n != 1 {
			t.Errorf("%s %s appears %d times", r.Method, r.Template, n)
		}
	}
}
