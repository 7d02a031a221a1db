package commands

// Commit is the git commit the binary was built from, set with Version by scripts/build.sh
// (-ldflags from scripts/ldflags.sh); `tori --version` prints both.
var Commit = "unknown"
