#!/usr/bin/env bash
# Builds Pebble (Let's Encrypt's small ACME test server, a Go program on the module proxy) and
# its challenge test server (pebble-challtestsrv: the DNS that points Pebble's validation at the
# edge under test) once into a cache directory and prints Pebble's path; the other is beside it. The zone agent's HTTPS tests start it on
# free ports with a config of their own and point ZONE_ACME_CA at it (pkg/testinfra/pebble.go).
# Usage: PEBBLE_BIN=$(scripts/pebble-build.sh)
set -euo pipefail

version=v2.10.3
exec "$(dirname "$0")/go-install-cached.sh" pebble "$version" \
  "the ACME test server the zone's HTTPS tests order certificates from" \
  github.com/letsencrypt/pebble/v2/cmd/pebble \
  github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv
