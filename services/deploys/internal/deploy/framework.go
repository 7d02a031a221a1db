package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Framework is what a deploy was made with, as its root package.json shows it. The app's
// `framework` field follows the framework of its live deploy.
type Framework string

// The contract's frameworks. Static is every deploy that shows none of the others: no
// package.json, one without a framework dependency, a broken one, or an image.
const (
	FrameworkStatic    Framework = "static"
	FrameworkVite      Framework = "vite"
	FrameworkNext      Framework = "next"
	FrameworkAstro     Framework = "astro"
	FrameworkSvelteKit Framework = "sveltekit"
)

// OrStatic is f, or static for a deploy whose framework was never set (an image).
func (f Framework) OrStatic() Framework {
	if f == "" {
		return FrameworkStatic
	}
	return f
}

// PackageJSONName is the file detection reads, only at the root of an upload.
const PackageJSONName = "package.json"

// MaxPackageJSONBytes bounds the package.json detection reads. Real ones are a few
// kilobytes; past this one it is not read and the deploy stays static.
const MaxPackageJSONBytes = 1 << 20

// frameworkPackages is the dependency that marks each framework, most specific first, for a
// package.json listing several: Astro and SvelteKit build on Vite and list it beside
// themselves, so vite alone means a plain Vite app and comes last; Next never builds with
// Vite and owns its build, so a project naming it is a Next app whatever else it lists; Astro
// comes before SvelteKit because an Astro site may carry Svelte pieces, while a SvelteKit app
// has no use for Astro.
var frameworkPackages = []struct {
	pkg string
	fw  Framework
}{
	{"next", FrameworkNext},
	{"astro", FrameworkAstro},
	{"@sveltejs/kit", FrameworkSvelteKit},
	{"vite", FrameworkVite},
}

// ErrBrokenPackageJSON means a package.json could not be read as one. It never fails a
// deploy: the deploy is static and the reason is logged.
var ErrBrokenPackageJSON = errors.New("package.json is not valid")

// packageJSON is the part of a package.json detection reads. npm requires every dependency's
// value to be a version string; anything else is a broken file.
type packageJSON struct {
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// utf8BOM starts files some editors save; npm reads past it, and so does detection.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// DetectFramework applies decisions.md's rule to the bytes of a root package.json: a
// framework's package among dependencies or devDependencies makes the deploy that
// framework, the most specific winning (frameworkPackages); none makes it static. The file
// must be one JSON object, in UTF-8, within MaxPackageJSONBytes; otherwise the answer is
// static with an error wrapping ErrBrokenPackageJSON that says why without quoting the file.
func DetectFramework(data []byte) (Framework, error) {
	if len(data) > MaxPackageJSONBytes {
		return FrameworkStatic, fmt.Errorf("%w: larger than %d bytes", ErrBrokenPackageJSON, MaxPackageJSONBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return FrameworkStatic, fmt.Errorf("%w: not UTF-8", ErrBrokenPackageJSON)
	}
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return FrameworkStatic, fmt.Errorf("%w: not a JSON object", ErrBrokenPackageJSON)
	}
	var p packageJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return FrameworkStatic, fmt.Errorf("%w: %s", ErrBrokenPackageJSON, describeJSONError(err))
	}
	for _, f := range frameworkPackages {
		if _, ok := p.Dependencies[f.pkg]; ok {
			return f.fw, nil
		}
		if _, ok := p.DevDependencies[f.pkg]; ok {
			return f.fw, nil
		}
	}
	return FrameworkStatic, nil
}

// describeJSONError says where the JSON went wrong in words of our own: the decoder's
// messages quote the offending characters.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("not JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be an object of version strings (at byte %d)", topField(typ.Field), typ.Offset)
	}
	return "not JSON"
}

// topField keeps the top-level field of a decoder path ("dependencies.vite" → dependencies):
// a package name is the customer's, not ours to log.
func topField(path string) string {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			return path[:i]
		}
	}
	if path == "" {
		return "a dependency list"
	}
	return path
}
