package buildplan

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// golang plans a Go module: go build of the module's root package into bin/<name> (the last
// element of the module path, as Heroku's Go buildpack names it), then that binary. The Go
// is the zone's own, with GOTOOLCHAIN=local (the sandbox sets it): a go.mod asking for a
// newer Go fails the build naming it instead of downloading one.
func golang(files Files) (Plan, error) {
	module := modulePath(files[GoMod])
	if module == "" {
		return Plan{}, fmt.Errorf("%s has no module line", GoMod)
	}
	bin := "bin/" + binaryName(module)
	return Plan{
		Detected: Go,
		Build:    "go build -o " + bin + " .",
		Start:    bin,
		Reason:   fmt.Sprintf("go.mod (module %s): go build of its root package, started as %s", module, bin),
	}, nil
}

// modulePath is go.mod's module path, or "" without a module line.
func modulePath(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`+"`")
		}
	}
	return ""
}

var (
	majorSuffix = regexp.MustCompile(`^v[0-9]+$`)
	unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// binaryName is the module path's last element (before a /vN major suffix), reduced to
// characters a shell word and a file name take as they are.
func binaryName(module string) string {
	name := path.Base(module)
	if majorSuffix.MatchString(name) && path.Dir(module) != "." {
		name = path.Base(path.Dir(module))
	}
	name = strings.Trim(unsafeChars.ReplaceAllString(name, "-"), "-.")
	if name == "" {
		return "app"
	}
	return name
}
