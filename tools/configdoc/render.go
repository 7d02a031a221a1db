package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// marker divides docs/configuration.md: prose written by hand above it, the tables this
// command writes below it.
const marker = "<!-- Everything below is written by `make docs` (tools/configdoc) from the config structs' env tags and doc comments: edit those, not this. -->"

// outputPath is the file, from the repository's root.
const outputPath = "docs/configuration.md"

// configPackages are the packages under services/ whose non-test files declare env tags: a
// service's internal/config, and any other package a process of a service loads its settings
// into (the zone's processes may each have their own).
func configPackages(root string) ([]string, error) {
	var dirs []string
	services := filepath.Join(root, "services")
	if _, err := os.Stat(services); os.IsNotExist(err) {
		return nil, nil
	}
	err := filepath.WalkDir(services, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("`env:\"")) && !bytes.Contains(b, []byte(" env:\"")) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if len(dirs) == 0 || dirs[len(dirs)-1] != rel {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	return slices.Compact(dirs), nil
}

// generate is the whole of docs/configuration.md as it should be: the committed prose above
// the marker, then every service's settings and the shared ones.
func generate(root string) (string, error) {
	mods, err := readModules(root)
	if err != nil {
		return "", err
	}
	s := &scanner{root: root, mods: mods, packages: map[string]*pkgSource{}, shared: map[sharedRef][]group{}}
	dirs, err := configPackages(root)
	if err != nil {
		return "", err
	}
	var sections []section
	for _, dir := range dirs {
		p, err := s.pkg(dir)
		if err != nil {
			return "", err
		}
		for _, rootStruct := range s.roots(p) {
			sec := section{Service: strings.Split(dir, "/")[1], Package: dir, Root: rootStruct}
			if err := s.walk(p, p.Structs[rootStruct], &sec.Groups, &sec.Shared); err != nil {
				return "", err
			}
			sections = append(sections, sec)
		}
	}

	prose, err := proseAbove(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(prose)
	b.WriteString(marker + "\n\n")
	b.WriteString("## Each service's settings\n\n")
	b.WriteString("Required: the service does not start without it (its tag says `required`, or its validation says `NAME is required`). Secret: never logged, its value shown as set or unset.\n\n")
	for _, sec := range sections {
		writeSection(&b, sec)
	}
	b.WriteString("## Shared settings\n\nStructs of `pkg` that services embed; each service reads them under the same names.\n\n")
	refs := make([]sharedRef, 0, len(s.shared))
	for ref, groups := range s.shared {
		if len(groups) > 0 {
			refs = append(refs, ref)
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Package != refs[j].Package {
			return refs[i].Package < refs[j].Package
		}
		return refs[i].Struct < refs[j].Struct
	})
	for _, ref := range refs {
		fmt.Fprintf(&b, "### %s\n\n", refTitle(ref))
		for i, g := range s.shared[ref] {
			writeGroup(&b, g, i > 0)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// proseAbove is the committed file's hand-written part, up to the marker.
func proseAbove(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, outputPath))
	if err != nil {
		if os.IsNotExist(err) {
			return "# Configuration\n\n", nil
		}
		return "", err
	}
	prose, _, found := strings.Cut(string(b), marker)
	if !found {
		return "", fmt.Errorf("%s has no line %q to divide its prose from the generated part", outputPath, marker)
	}
	return prose, nil
}

func writeSection(b *strings.Builder, sec section) {
	title := sec.Service
	if sec.Package != "services/"+sec.Service+"/internal/config" || sec.Root != "Config" {
		title += " (" + strings.TrimPrefix(sec.Package, "services/"+sec.Service+"/") + "." + sec.Root + ")"
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	fmt.Fprintf(b, "`%s`, struct `%s`.", sec.Package, sec.Root)
	if len(sec.Shared) > 0 {
		var links []string
		for _, ref := range sec.Shared {
			links = append(links, fmt.Sprintf("[%s](#%s)", refTitle(ref), anchor(refTitle(ref))))
		}
		fmt.Fprintf(b, " Also reads the shared %s.", strings.Join(links, " and "))
	}
	b.WriteString("\n\n")
	for i, g := range sec.Groups {
		writeGroup(b, g, i > 0)
	}
}

// writeGroup writes one struct's table; a nested struct gets its name and doc comment above.
func writeGroup(b *strings.Builder, g group, nested bool) {
	if nested {
		fmt.Fprintf(b, "#### %s\n\n", g.Title)
		if g.Doc != "" {
			b.WriteString(g.Doc + "\n\n")
		}
	}
	b.WriteString("| variable | default | required | what it is |\n|---|---|---|---|\n")
	for _, set := range g.Settings {
		def := "unset"
		if set.HasDefault {
			def = "`" + set.Default + "`"
			if set.Default == "" {
				def = "empty"
			}
		}
		req := ""
		switch set.Required {
		case "":
		case "yes":
			req = "yes"
		default:
			req = set.Required
		}
		if set.Secret {
			req = strings.TrimPrefix(req+", secret", ", ")
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", set.Name, cell(def), cell(req), cell(set.Doc))
	}
	b.WriteString("\n")
}

func refTitle(ref sharedRef) string {
	if ref.Struct == "Config" {
		return ref.Package
	}
	return ref.Package + "." + ref.Struct
}

// anchor is the id GitHub gives a heading: lower case, spaces to hyphens, other
// punctuation dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// cell keeps a table cell on one line and its pipes literal.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}
