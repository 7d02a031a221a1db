#!/usr/bin/env bash
# Builds the Go commands PACKAGE… at VERSION once into the cache folder NAME-VERSION and prints
# the first one's path (the others are beside it); a later call finds them there and builds
# nothing. For modules without `replace` lines only: `go install pkg@version` builds them as
# published, checked against the checksum database, outside any workspace (a module with
# replace lines builds through a wrapper module, as scripts/vault-dev-build.sh does).
# Before it builds (never when it finds them) it says on stderr, in one line, what it builds and
# WHY (what needs it), as scripts/ensure-services.sh does before it installs: a first build can
# take minutes. Its stdout is the path alone.
# Usage: scripts/go-install-cached.sh NAME VERSION WHY PACKAGE...
set -euo pipefail
name=$1 version=$2 why=$3
shift 3
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/$name-$version"
bins=()
for pkg in "$@"; do bins+=("$cache/${pkg##*/}"); done

built=1
for b in "${bins[@]}"; do [ -x "$b" ] || built=0; done
if [ "$built" = 1 ]; then
  echo "${bins[0]}"
  exit 0
fi

echo "building $name $version from the Go module proxy into $cache ($why; once, cached after)" >&2
mkdir -p "$cache"
# Into a temporary folder first, then renamed into place: an interrupted build never leaves
# half a binary where a later call would take it for a whole one.
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOBIN="$tmp" GOFLAGS="-buildvcs=false" go install -trimpath "${@/%/@$version}" >&2
for b in "${bins[@]}"; do mv "$tmp/${b##*/}" "$b"; done
echo "${bins[0]}"
