#!/usr/bin/env bash
# Builds stripe-mock (Stripe's own mock of its API, a Go program on the module proxy) once into
# a cache directory and prints the binary's path. Billing's tests start it on a free port and
# point STRIPE_API_URL at it. The version is pinned to the one whose OpenAPI document matches
# the API version of the stripe-go the billing service uses (stripe-go v85: the "dahlia" API;
# stripe-mock v0.203.0 embeds 2026-08-26.dahlia, the nearest release on the proxy).
# Usage: STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh)
set -euo pipefail
exec "$(dirname "$0")/go-install-cached.sh" stripe-mock v0.203.0 \
  "the Stripe API billing's tests talk to" \
  github.com/stripe/stripe-mock
