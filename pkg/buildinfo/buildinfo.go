// Package buildinfo holds what the build stamps into every binary: the version and the git
// commit it was built from. scripts/build.sh sets both with -ldflags (scripts/ldflags.sh
// says how); a plain `go build` leaves the defaults, which say so.
package buildinfo

import (
	"fmt"
	"runtime"
)

// Set at build time: -X tori.dev/pkg/buildinfo.Version=… -X tori.dev/pkg/buildinfo.Commit=….
var (
	// Version is the release ("v1.2.0"), or for an untagged tree a pre-release naming its
	// commit ("0.0.0-dev+g2ff2f5a", with ".dirty" when built from uncommitted changes).
	Version = "dev"
	// Commit is the full git commit hash the binary was built from.
	Commit = "unknown"
)

// Line is what `<program> --version` prints: the program, its version, commit and Go.
func Line(program string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", program, Version, Commit, runtime.Version())
}

// Asked reports whether a command line (without the program's name) asks only for the
// version: `--version`, `-version` or `version`.
func Asked(args []string) bool {
	if len(args) != 1 {
		return false
	}
	switch args[0] {
	case "--version", "-version", "version":
		return true
	}
	return false
}
