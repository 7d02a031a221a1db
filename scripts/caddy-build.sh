#!/usr/bin/env bash
# Builds Caddy (the Go web server, on the module proxy) once into a cache directory and prints
# the binary's path: the reference `make bench-edge` measures the zone's edge against (its
# file_server for static sites, its reverse_proxy for apps). Only that target builds it.
# The first build takes about two minutes of CPU (2 min 47 s on this 2-core machine, loaded);
# later runs reuse the 80 MB binary.
# Usage: CADDY_BIN=$(scripts/caddy-build.sh)
set -euo pipefail

version=v2.11.9
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/caddy-$version"
bin="$cache/caddy"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# Caddy's module has no replace lines, so go install pkg@version builds it as published,
# checked against the checksum database, outside any workspace. The binary goes into a
# temporary folder first and is renamed into place: no half-built caddy is ever found.
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOBIN="$tmp" GOFLAGS="-buildvcs=false" go install -trimpath "github.com/caddyserver/caddy/v2/cmd/caddy@$version" >&2
mv "$tmp/caddy" "$bin"
echo "$bin"
