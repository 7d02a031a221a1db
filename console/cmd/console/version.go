package main

// Set by scripts/build.sh (-ldflags from `scripts/ldflags.sh main`): `console --version`.
var (
	Version = "dev"
	Commit  = "unknown"
)
