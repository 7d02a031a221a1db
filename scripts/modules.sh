#!/usr/bin/env bash
# Prints every module directory that go.work uses, one a line.
set -euo pipefail
cd "$(dirname "$0")/.."
go work edit -json | python3 -c 'import json,sys; [print(u["DiskPath"].lstrip("./") or ".") for u in json.load(sys.stdin)["Use"]]'
