#!/usr/bin/env bash
# Builds every service binary (services/<name>/cmd/<name>) into ./bin, and the web console
# (npm ci and Vite, then bin/console, which embeds the built files).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
# Every binary carries its version and git commit (`<binary> --version`, /healthz).
ldflags=$(scripts/ldflags.sh)
cli_ldflags=$(scripts/ldflags.sh tori.dev/cli/internal/commands)
console_ldflags=$(scripts/ldflags.sh main)
# A fresh clone has no bin/ yet: its first build fetches every module and compiles everything
# (minutes), so it says so first; a rebuild is Go's cache and says nothing.
fresh=
for dir in services/*/cmd/*/; do [ -x "bin/$(basename "$dir")" ] || fresh=1; done
[ -x bin/tori ] && [ -x bin/bootstrap ] && [ -x bin/console ] || fresh=1
if [ -n "$fresh" ]; then
  echo "building every service, tori, bootstrap and the console into ./bin (make build: the first time fetches the Go modules and compiles everything; minutes)" >&2
fi
for dir in services/*/cmd/*/; do
  name=$(basename "$dir")
  svc=$(echo "$dir" | cut -d/ -f2)
  (cd "services/$svc" && go build -ldflags "$ldflags" -o "../../bin/$name" "./cmd/$name")
done
(cd cli && go build -ldflags "$cli_ldflags" -o ../bin/tori ./cmd/tori)
(cd tools/bootstrap && go build -ldflags "$ldflags" -o ../../bin/bootstrap .)
# The console's page first, so bin/console embeds it. npm ci reinstalls only when the lockfile
# is newer than the last install.
if command -v npm >/dev/null; then
  # Vite 8 installs only with npm 11; a machine whose npm upgrade failed at start has 10.
  if [ "$(npm --version | cut -d. -f1)" -lt 11 ]; then
    echo "npm $(npm --version) is too old for the console's Vite 8: installing npm 11" >&2
    npm install -g --no-audit --no-fund npm@11 >/dev/null
  fi
  (
    cd console
    if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      echo "installing the console's npm packages (npm ci: node_modules is missing or older than package-lock.json)" >&2
      npm ci --no-audit --no-fund
    fi
    npm run --silent build
  )
else
  echo "npm not found: bin/console will serve a page saying the console is not built (install Node.js 20)" >&2
fi
(cd console && go build -ldflags "$console_ldflags" -o ../bin/console ./cmd/console)
