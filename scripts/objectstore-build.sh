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
exec "$(dirname "$0")/go-install-cached.sh" versitygw "$version" \
  "the S3 server make run and the tests keep artifacts, sites and dumps in; about two minutes" \
  github.com/versity/versitygw/cmd/versitygw
