#!/usr/bin/env bash
# Prints the -ldflags that stamp a binary with its version and git commit. The variables live
# in tori.dev/pkg/buildinfo unless $1 names another package (the CLI and the console, modules
# of their own, keep theirs in theirs). TORI_VERSION overrides the version (a release build);
# otherwise it is the nearest v* tag, or 0.0.0-dev+g<short commit> on an untagged tree, with
# ".dirty" when the work tree has uncommitted changes. Outside git: "dev" and "unknown".
set -euo pipefail
cd "$(dirname "$0")/.."
pkg="${1:-tori.dev/pkg/buildinfo}"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
version="${TORI_VERSION:-}"
if [ -z "$version" ]; then
  if [ "$commit" = unknown ]; then
    version=dev
  else
    dirty=""
    git diff --quiet HEAD -- 2>/dev/null || dirty=".dirty"
    if tag=$(git describe --tags --match 'v[0-9]*' --exact-match 2>/dev/null); then
      version="$tag${dirty:++dirty}"
    elif tag=$(git describe --tags --match 'v[0-9]*' --abbrev=0 2>/dev/null); then
      version="${tag#v}-dev+g$(git rev-parse --short=7 HEAD)$dirty"
    else
      version="0.0.0-dev+g$(git rev-parse --short=7 HEAD)$dirty"
    fi
  fi
fi
printf -- '-X %s.Version=%s -X %s.Commit=%s\n' "$pkg" "$version" "$pkg" "$commit"
