package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// setting is one environment variable as its struct field declares it.
type setting struct {
	Name       string
	Default    string
	HasDefault bool
	Required   string // "", "yes", or the condition ("when X is set")
	Secret     bool
	Doc        string
}

// group is one struct's own settings; nested structs of the same package are groups of
// their own, structs of another package (pkg's shared ones) are named in Shared.
type group struct {
	Title    string // the struct's name
	Doc      string // the struct's doc comment
	Settings []setting
}

// section is everything one configuration struct reads.
type section struct {
	Service string // services/<name>
	Package string // the config package's folder, from the repository's root
	Root    string // the struct config.Load fills
	Groups  []group
	Shared  []sharedRef
}

// sharedRef names a struct of another package whose settings are listed once, apart.
type sharedRef struct {
	Package string // folder from the repository's root, e.g. pkg/bus
	Struct  string
}

// pkgSource is one parsed package: its structs and the string literals its validation
// writes (where "NAME is required" says a setting is required).
type pkgSource struct {
	Dir      string // from the repository's root
	Structs  map[string]*structSource
	Literals []string
	fset     *token.FileSet
}

type structSource struct {
	Name    string
	Doc     string
	Type    *ast.StructType
	Imports map[string]string // the file's import names → paths
}

// parsePackage reads the non-test Go files of one folder.
func parsePackage(root, dir string) (*pkgSource, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		return nil, err
	}
	p := &pkgSource{Dir: dir, Structs: map[string]*structSource{}, fset: fset}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		imports := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			local := filepath.Base(path)
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					p.Literals = append(p.Literals, s)
				}
			}
			return true
		})
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				p.Structs[ts.Name.Name] = &structSource{Name: ts.Name.Name, Doc: oneLine(doc.Text()), Type: st, Imports: imports}
			}
		}
	}
	return p, nil
}

// scanner walks configuration structs, reading other packages of the repository on demand.
type scanner struct {
	root     string
	mods     modules
	packages map[string]*pkgSource // by folder
	// shared holds the groups of every struct named by a sharedRef.
	shared map[sharedRef][]group
}

func (s *scanner) pkg(dir string) (*pkgSource, error) {
	if p, ok := s.packages[dir]; ok {
		return p, nil
	}
	p, err := parsePackage(s.root, dir)
	if err != nil {
		return nil, err
	}
	s.packages[dir] = p
	return p, nil
}

// roots are the structs of a package that hold settings and that no other struct of the
// package holds: the ones config.Load is given.
func (s *scanner) roots(p *pkgSource) []string {
	held := map[string]bool{}
	for _, st := range p.Structs {
		for _, f := range st.Type.Fields.List {
			if id, ok := derefType(f.Type).(*ast.Ident); ok {
				held[id.Name] = true
			}
		}
	}
	var out []string
	for name, st := range p.Structs {
		if held[name] || !s.hasSettings(p, st, map[string]bool{}) {
			continue
		}
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i] == "Config") != (out[j] == "Config") {
			return out[i] == "Config"
		}
		return out[i] < out[j]
	})
	return out
}

func (s *scanner) hasSettings(p *pkgSource, st *structSource, seen map[string]bool) bool {
	if seen[st.Name] {
		return false
	}
	seen[st.Name] = true
	for _, f := range st.Type.Fields.List {
		if envName(f) != "" {
			return true
		}
		if id, ok := derefType(f.Type).(*ast.Ident); ok {
			if nested, ok := p.Structs[id.Name]; ok && s.hasSettings(p, nested, seen) {
				return true
			}
		}
	}
	return false
}

// walk appends st's settings as a group, then its nested structs' groups, to sec.
func (s *scanner) walk(p *pkgSource, st *structSource, groups *[]group, shared *[]sharedRef) error {
	g := group{Title: st.Name, Doc: st.Doc}
	var nested []*structSource
	var carried string // the last field comment of this run of fields (no blank line between)
	prevLine := -1
	fields := map[string]bool{}
	for _, f := range st.Type.Fields.List {
		for _, n := range f.Names {
			fields[n.Name] = true
		}
	}
	for _, f := range st.Type.Fields.List {
		line := p.fset.Position(f.Pos()).Line
		if f.Doc != nil {
			line = p.fset.Position(f.Doc.Pos()).Line
		}
		if prevLine >= 0 && line > prevLine+1 {
			carried = "" // a blank line ends a commented group of fields
		}
		prevLine = p.fset.Position(f.End()).Line
		name := envName(f)
		if name == "-" {
			continue
		}
		if name == "" {
			switch t := derefType(f.Type).(type) {
			case *ast.Ident:
				if n, ok := p.Structs[t.Name]; ok {
					nested = append(nested, n)
				}
			case *ast.SelectorExpr:
				x, ok := t.X.(*ast.Ident)
				if !ok {
					continue
				}
				dir := s.mods.dir(st.Imports[x.Name])
				if dir == "" {
					continue
				}
				rel, err := filepath.Rel(s.root, dir)
				if err != nil {
					return err
				}
				ref := sharedRef{Package: filepath.ToSlash(rel), Struct: t.Sel.Name}
				if err := s.share(ref); err != nil {
					return err
				}
				if len(s.shared[ref]) > 0 {
					*shared = append(*shared, ref)
				}
			}
			continue
		}
		fieldName := ""
		if len(f.Names) > 0 {
			fieldName = f.Names[0].Name
		}
		doc := ""
		switch {
		case f.Doc != nil:
			carried = oneLine(f.Doc.Text())
			doc = stripFieldName(carried, fieldName)
		case f.Comment != nil:
			doc = oneLine(f.Comment.Text())
		case carried != "" && (speaksOfOthers(carried, fields) || containsWord(carried, fieldName)):
			// "The sandbox: its tools, …" over several fields, or "A and B are …": the
			// comment is this bare field's too.
			doc = "As above."
		}
		set := parseTag(name, tagOf(f))
		set.Doc = doc
		set.Secret = reflect.StructTag(tagOf(f)).Get("secret") == "true"
		if set.Required == "" {
			set.Required = requiredBy(p.Literals, set.Name)
		}
		g.Settings = append(g.Settings, set)
	}
	if len(g.Settings) > 0 {
		*groups = append(*groups, g)
	}
	for _, n := range nested {
		if err := s.walk(p, n, groups, shared); err != nil {
			return err
		}
	}
	return nil
}

// share reads the struct a sharedRef names, once.
func (s *scanner) share(ref sharedRef) error {
	if _, ok := s.shared[ref]; ok {
		return nil
	}
	s.shared[ref] = nil
	p, err := s.pkg(ref.Package)
	if err != nil {
		return err
	}
	st, ok := p.Structs[ref.Struct]
	if !ok {
		return nil
	}
	var groups []group
	var more []sharedRef
	if err := s.walk(p, st, &groups, &more); err != nil {
		return err
	}
	s.shared[ref] = groups
	return nil
}

func tagOf(f *ast.Field) string {
	if f.Tag == nil {
		return ""
	}
	t, _ := strconv.Unquote(f.Tag.Value)
	return t
}

// envName is the variable an env tag names: "" without one, "-" when the field is skipped.
func envName(f *ast.Field) string {
	tag, ok := reflect.StructTag(tagOf(f)).Lookup("env")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	return strings.TrimSpace(name)
}

// parseTag reads go-envconfig's `NAME, required` and `NAME, default=value` (a default is
// the rest of the tag, commas included).
func parseTag(name, full string) setting {
	tag := reflect.StructTag(full).Get("env")
	set := setting{Name: name}
	_, opts, _ := strings.Cut(tag, ",")
	for opts != "" {
		opts = strings.TrimSpace(opts)
		if rest, ok := strings.CutPrefix(opts, "default="); ok {
			set.Default, set.HasDefault = rest, true
			break
		}
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		if strings.TrimSpace(opt) == "required" {
			set.Required = "yes"
		}
	}
	return set
}

// requiredBy reads the package's own validation messages: "NAME is required" says so, and
// "NAME is required when …" says when.
func requiredBy(literals []string, name string) string {
	needle := name + " is required"
	for _, lit := range literals {
		i := strings.Index(lit, needle)
		if i < 0 || (i > 0 && isNameByte(lit[i-1])) {
			continue
		}
		rest := strings.TrimSpace(lit[i+len(needle):])
		if cond, ok := cutWord(rest, "when", "unless", "if"); ok {
			if j := strings.IndexAny(cond, "(;:"); j >= 0 {
				cond = cond[:j]
			}
			return strings.TrimSpace(cond)
		}
		return "yes"
	}
	return ""
}

func cutWord(s string, words ...string) (string, bool) {
	for _, w := range words {
		if strings.HasPrefix(s, w+" ") {
			return s, true
		}
	}
	return "", false
}

func isNameByte(b byte) bool { return b == '_' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' }

func derefType(e ast.Expr) ast.Expr {
	if st, ok := e.(*ast.StarExpr); ok {
		return st.X
	}
	return e
}

// oneLine joins a comment's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stripFieldName turns "Addr is where the service listens" into "Where the service listens",
// and "AppsDomain: an app is served at …" into "An app is served at …".
func stripFieldName(doc, field string) string {
	rest, ok := strings.CutPrefix(doc, field)
	if !ok || field == "" || namesSeveral(rest) || (rest != "" && rest[0] != ' ' && rest[0] != ':' && rest[0] != ',') {
		return doc
	}
	rest = strings.TrimLeft(rest, " :,")
	for _, verb := range []string{"is ", "are "} {
		if r, ok := strings.CutPrefix(rest, verb); ok {
			rest = r
			break
		}
	}
	if rest == "" {
		return doc
	}
	// "where the service listens" becomes a sentence; "smtp://…" and "host:port" stay as written.
	for _, c := range strings.TrimRight(firstWord(rest), ".;") {
		if c < 'a' || c > 'z' {
			return rest
		}
	}
	return strings.ToUpper(rest[:1]) + rest[1:]
}

// speaksOfOthers reports whether a field comment is about more than its field: one that
// does not begin with a field's name ("The sandbox: its tools, …"), or names two ("A and B
// are …").
func speaksOfOthers(doc string, fields map[string]bool) bool {
	first := firstWord(doc)
	if !fields[first] {
		return true
	}
	rest := strings.TrimPrefix(doc, first)
	return namesSeveral(rest)
}

// namesSeveral: what follows a field's name in "A and B are …", "A, B …" or "A … D are …".
func namesSeveral(rest string) bool {
	if after, ok := strings.CutPrefix(rest, ", "); ok {
		return after != "" && after[0] >= 'A' && after[0] <= 'Z' // "A, B …", not "A, for tests only, …"
	}
	return strings.HasPrefix(rest, " and ") || strings.HasPrefix(rest, " … ")
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return strings.TrimRight(w, ":,")
}

func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if f == w {
			return true
		}
	}
	return false
}
