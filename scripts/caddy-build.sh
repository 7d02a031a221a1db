#!/usr/bin/env bash
# Builds Caddy (the Go web server, on the module proxy) once into a cache directory and prints
# the binary's path: the reference `make bench-edge` measures the zone's edge against (its
# file_server for static sites, its reverse_proxy for apps). Only that target builds it.
# The first build takes about two minutes of CPU (2 min 47 s on this 2-core machine, loaded);
# later runs reuse the 80 MB binary.
# Usage: CADDY_BIN=$(scripts/caddy-build.sh)
set -euo pipefail

version=v2.11.9
exec "$(dirname "$0")/go-install-cached.sh" caddy "$version" \
  "the server make bench-edge measures the edge against" \
  github.com/caddyserver/caddy/v2/cmd/caddy
