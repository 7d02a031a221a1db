#!/usr/bin/env bash
# Builds Pebble (Let's Encrypt's small ACME test server, a Go program on the module proxy) and
# its challenge test server (pebble-challtestsrv: the DNS that points Pebble's validation at the
# edge under test) once into a cache directory and prints Pebble's path; the other is beside it. The zone agent's HTTPS tests start it on
# free ports with a config of their own and point ZONE_ACME_CA at it (pkg/testinfra/pebble.go).
# Usage: PEBBLE_BIN=$(scripts/pebble-build.sh)
set -euo pipefail

version=v2.10.3
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/pebble-$version"
bin="$cache/pebble"

if [ -x "$bin" ] && [ -x "$cache/pebble-challtestsrv" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# go install pkg@version builds outside any workspace and checks the module against the
# checksum database. Install into a temporary folder and rename: an interrupted build never
# leaves half a binary behind.
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOBIN="$tmp" GOFLAGS="-buildvcs=false" go install -trimpath "github.com/letsencrypt/pebble/v2/cmd/pebble@$version" \
  "github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv@$version" >&2
mv "$tmp/pebble-challtestsrv" "$cache/pebble-challtestsrv"
mv "$tmp/pebble" "$bin"
echo "$bin"
