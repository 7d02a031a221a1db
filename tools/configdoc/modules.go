package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// modules maps each module path of go.work to its folder, so an import such as
// tori.dev/pkg/bus can be read from the repository's own source.
type modules map[string]string

// readModules reads go.work's use lines and each used module's go.mod module line.
func readModules(root string) (modules, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	mods := modules{}
	inUse := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "use ("):
			inUse = true
			continue
		case inUse && line == ")":
			inUse = false
			continue
		case strings.HasPrefix(line, "use "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "use "))
		case !inUse:
			continue
		}
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		dir := filepath.Join(root, line)
		path, err := modulePath(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		mods[path] = dir
	}
	return mods, nil
}

func modulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", goMod)
}

// dir is the folder of an import path inside the repository; "" when it is not one of ours.
func (m modules) dir(importPath string) string {
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	// The longest module path first: tori.dev/pkg before tori.dev.
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, p := range paths {
		if importPath == p {
			return m[p]
		}
		if rest, ok := strings.CutPrefix(importPath, p+"/"); ok {
			return filepath.Join(m[p], rest)
		}
	}
	return ""
}
