#!/usr/bin/env bash
# Builds the Vault v1.13.0 server (tools/vault-dev) once into a cache directory and prints
# the binary's path. No Vault package exists for this machine; the first build compiles
# Vault and its whole dependency graph and takes several minutes, so later runs reuse it.
# Usage: VAULT_BIN=$(scripts/vault-dev-build.sh)
set -euo pipefail
cd "$(dirname "$0")/../tools/vault-dev"

version=v1.13.0
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/vault-$version"
bin="$cache/vault"

if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

echo "building Vault $version from the Go module proxy into $cache (the apps service's Vault tests run it; once, several minutes)" >&2
mkdir -p "$cache"
# Outside go.work on purpose; go.sum is committed, so the build is checked against it
# (-mod=readonly). Build to a temporary name and rename: an interrupted build never leaves
# half a binary behind.
GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath -o "$bin.tmp.$$" . >&2
mv "$bin.tmp.$$" "$bin"
"$bin" version >&2
echo "$bin"
