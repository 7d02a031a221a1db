#!/usr/bin/env bash
# Builds stripe-mock (Stripe's own mock of its API, a Go program on the module proxy) once into
# a cache directory and prints the binary's path. Billing's tests start it on a free port and
# point STRIPE_API_URL at it. The version is pinned to the one whose OpenAPI document matches
# the API version of the stripe-go the billing service uses (stripe-go v85: the "dahlia" API;
# stripe-mock v0.203.0 embeds 2026-08-26.dahlia, the nearest release on the proxy).
# Usage: STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh)
set -euo pipefail

version=v0.203.0
cache="${TORI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tori}/stripe-mock-$version"
bin="$cache/stripe-mock"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# go install pkg@version builds outside any workspace and checks the module against the
# checksum database. Install into a temporary folder and rename: an interrupted build never
# leaves half a binary behind.
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOBIN="$tmp" GOFLAGS="-buildvcs=false" go install -trimpath "github.com/stripe/stripe-mock@$version" >&2
mv "$tmp/stripe-mock" "$bin"
echo "$bin"
