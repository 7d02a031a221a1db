package routes

import (
	"testing"

	"tori.dev/contract/access"
)

// Every operation that takes a token is in contract/access's table, which every service's
// gate enforces and the OpenAPI document shows, and the table lists nothing the gateway does
// not route as authenticated: a route missing there would answer 404 from its service, and
// one missing here would be counted as unknown and left out of the document.
func TestAuthenticatedRoutesAreTheAccessTable(t *testing.T) {
	gateway := map[string]bool{}
	for _, r := range All() {
		if r.Public {
			continue
		}
		gateway[r.Method+" "+r.Template] = true
	}
	table := map[string]bool{}
	for _, r := range access.All() {
		op := r.Method + " " + r.Template
		table[op] = true
		if !gateway[op] {
			t.Errorf("%s is in contract/access but not an authenticated route of the gateway", op)
		}
	}
	for op := range gateway {
		if !table[op] {
			t.Errorf("%s is an authenticated route of the gateway but not in contract/access", op)
		}
	}
	if len(gateway) == 0 || len(table) == 0 {
		t.Fatal("an empty table proves nothing")
	}
}
