#!/usr/bin/env bash
# Builds the Versity S3 gateway (versitygw, an S3-compatible server in Go on the module proxy)
# once into a cache directory and prints the binary's path. make run and the tests start it with
# its posix backend (buckets are folders) and its internal IAM (one account per workload, each
# owning its buckets); docs/objectstore.md says why this server and what it enforces.
# The first build costs about 130 s of CPU (two minutes on two idle cores, 8 on a busy machine;
# docs/objectstore.md) and makes an 80 MB binary; later runs reuse it.
# Usage: OBJECTSTORE_BIN=$(scripts/objectstore-build.sh)
set -euo pipefail

version=v1.8.0
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/versitygw-$version"
bin="$cache/versitygw"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# The module has no replace lines, so go install pkg@version builds it as published and checks
# it against the checksum database, outside any workspace. Install into a temporary folder and
# rename: an interrupted build never leaves half a binary behind.
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOBIN="$tmp" GOFLAGS="-buildvcs=false" go install -trimpath "github.com/versity/versitygw/cmd/versitygw@$version" >&2
mv "$tmp/versitygw" "$bin"
echo "$bin"
