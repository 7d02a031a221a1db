#!/usr/bin/env bash
# Builds every service binary (services/<name>/cmd/<name>) into ./bin, and the web console
# (npm ci and Vite, then bin/console, which embeds the built files).
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
# The console's page first, so bin/console embeds it. npm ci reinstalls only when the lockfile
# is newer than the last install.
if command -v npm >/dev/null; then
  (
    cd console
    if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      npm ci --no-audit --no-fund
    fi
    npm run --silent build
  )
else
  echo "npm not found: bin/console will serve a page saying the console is not built (install Node.js 20)" >&2
fi
(cd console && go build -o ../bin/console ./cmd/console)
