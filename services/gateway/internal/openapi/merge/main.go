// Command merge lays the services' OpenAPI fragments over the gateway's document:
//
//	cd services/gateway && go run ./internal/openapi/merge ../*/openapi-fragment.json
//
// It rewrites openapi.json (or -doc) in place; running it again with the same fragments
// changes nothing.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"tori.dev/services/gateway/internal/openapi"
)

func main() {
	docPath := flag.String("doc", "openapi.json", "the gateway's document, rewritten in place")
	flag.Parse()
	if err := run(*docPath, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "merge:", err)
		os.Exit(1)
	}
}

func run(docPath string, fragmentPaths []string) error {
	base, err := read(docPath)
	if err != nil {
		return err
	}
	var frags []openapi.Fragment
	for _, p := range fragmentPaths {
		d, err := read(p)
		if err != nil {
			return err
		}
		frags = append(frags, openapi.Fragment{Name: p, Doc: d})
	}
	if err := openapi.Merge(base, frags...); err != nil {
		return err
	}
	out, err := openapi.Encode(base)
	if err != nil {
		return err
	}
	return os.WriteFile(docPath, out, 0o644)
}

func read(path string) (openapi.Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d openapi.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
