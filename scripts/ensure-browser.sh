#!/usr/bin/env bash
# What the web console's browser test (tests/e2e/console_test.go) needs: Debian's Chromium at
# /usr/bin/chromium (playwright-core drives it; browser downloads do not work here) and the
# console's npm packages (npm ci, when the lockfile is newer than the last install).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium"
  { DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1; } || {
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null
  }
fi
[ -x /usr/bin/chromium ] || { echo "FAILED: /usr/bin/chromium is missing (apt-get install -y chromium)" >&2; exit 1; }

if ! command -v npm >/dev/null 2>&1; then
  echo "FAILED: npm is missing: the console needs Node.js 20 and npm" >&2
  exit 1
fi
cd console
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
