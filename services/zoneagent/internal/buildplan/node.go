package buildplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// node plans a package.json: npm ci when a lockfile pins the tree (npm install otherwise),
// then its build script if it has one; started by its start script, else by server.js
// (npm's own default for npm start).
func node(files Files) (Plan, error) {
	scripts, err := packageScripts(files[PackageJSON])
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Detected: Node}
	install, why := "npm install", "package.json without a lockfile: npm install"
	for _, lock := range []string{PackageLock, NpmShrinkwrap} {
		if files.has(lock) {
			install, why = "npm ci", "package.json with "+lock+": npm ci"
			break
		}
	}
	var build string
	if _, ok := scripts["build"]; ok {
		build = "npm run build"
		why += ", then its build script"
	}
	p.Build = joinCommands(install, build)
	switch {
	case scripts["start"] != "":
		p.Start = "npm start"
		why += "; started by its start script"
	case files.has(ServerJS):
		p.Start = "node server.js"
		why += "; no start script, so node server.js"
	default:
		p.Reason = why
		return p, &noStartError{PackageJSON + " has no start script and there is no server.js"}
	}
	p.Reason = why
	return p, nil
}

// packageScripts reads package.json's scripts; a file that is not a JSON object, or whose
// scripts are not an object of strings, is an error naming the file and the place.
func packageScripts(b []byte) (map[string]string, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // npm tolerates a byte-order mark
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, jsonError(PackageJSON, b, err)
	}
	if doc == nil {
		return nil, fmt.Errorf("%s is not a JSON object", PackageJSON)
	}
	raw, ok := doc["scripts"]
	if !ok || string(raw) == "null" {
		return map[string]string{}, nil
	}
	var scripts map[string]string
	if err := json.Unmarshal(raw, &scripts); err != nil {
		return nil, fmt.Errorf("%s: scripts must be an object of command strings", PackageJSON)
	}
	return scripts, nil
}

// jsonError names the file and where in it the JSON broke.
func jsonError(name string, b []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		line, col := position(b, syntax.Offset)
		return fmt.Errorf("%s is not valid JSON: %v (line %d, column %d)", name, syntax, line, col)
	case errors.As(err, &typ):
		return fmt.Errorf("%s is not a JSON object", name)
	}
	return fmt.Errorf("%s is not valid JSON: %v", name, err)
}

// position is the 1-based line and column of byte offset off in b.
func position(b []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}
