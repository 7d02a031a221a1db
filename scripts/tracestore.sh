#!/usr/bin/env bash
# Builds the trace store, Jaeger (its query API; the web UI's files are not in the Go
# module), from the Go module proxy into ~/.cache/tori once, and prints the binary's path.
# tools/tracestore is the module that pins it (a `tool` line and its go.sum); it is not in
# go.work, so the control plane's modules never see Jaeger's dependencies. Minutes the first
# time, instant after.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$1 == "github.com/jaegertracing/jaeger" {print $2; exit}' tools/tracestore/go.mod)
[ -n "$version" ] || { echo "tools/tracestore/go.mod does not require Jaeger" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/tori"
bin="$cache/jaeger-$version"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  echo "building Jaeger $version from the Go module proxy into $bin (the trace store make run TRACES=1 and the traces test use; once, minutes)" >&2
  (cd tools/tracestore && GOWORK=off go build -trimpath -o "$bin.tmp.$$" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$bin.tmp.$$" "$bin"
fi
echo "$bin"
