#!/usr/bin/env bash
# Builds every service binary (services/<name>/cmd/<name>) into ./bin.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
for dir in services/*/cmd/*/; do
  name=$(basename "$dir")
  svc=$(echo "$dir" | cut -d/ -f2)
  (cd "services/$svc" && go build -o "../../bin/$name" "./cmd/$name")
done
(cd cli && go build -o ../bin/tori ./cmd/tori)
(cd tools/bootstrap && go build -o ../../bin/bootstrap .)
