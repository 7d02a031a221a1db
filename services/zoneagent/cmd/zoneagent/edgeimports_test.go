package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// edgeFiles are this package's files the edge process runs (its composition root, listeners,
// certificate states and site cache; serveEdge in parts.go uses only these).
var edgeFiles = []string{"edgeprocess.go", "edge.go", "certstate.go", "sites.go"}

// forbiddenInEdge are the runtime's packages: whatever enters namespaces, runs processes or
// holds the managed databases. The edge process must reach none of them (not even through
// another package), so nothing in it can call setns.
var forbiddenInEdge = []string{
	"tori.dev/services/zoneagent/internal/sandbox",
	"tori.dev/services/zoneagent/internal/supervisor",
	"tori.dev/services/zoneagent/internal/imageruntime",
	"tori.dev/services/zoneagent/internal/managed",
	"tori.dev/services/zoneagent/internal/pooler",
}

// The edge's packages (internal/edge, edgelink, edgeproxy) and the imports of the edge's files
// here do not import the runtime's packages, directly or through any dependency.
func TestEdgeImportsNothingOfTheRuntime(t *testing.T) {
	roots := []string{
		"tori.dev/services/zoneagent/internal/edge",
		"tori.dev/services/zoneagent/internal/edgelink",
		"tori.dev/services/zoneagent/internal/edgeproxy",
	}
	fset := token.NewFileSet()
	for _, name := range edgeFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "tori.dev/") {
				roots = append(roots, path)
			}
		}
	}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, roots...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < len(roots) {
		t.Fatalf("go list listed %d packages for %d roots", len(deps), len(roots))
	}
	for _, dep := range deps {
		for _, bad := range forbiddenInEdge {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("the edge's packages reach %s", dep)
			}
		}
	}
}
