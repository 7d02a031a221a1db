#!/usr/bin/env bash
# Vets and tests every module in go.work (`go test ./...` at the root would test none of
# them), then runs the tests that must have the broker to themselves.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
scripts/ensure-services.sh || exit 1
# Chromium and the console's npm packages, for the console's browser test in tests/e2e.
scripts/ensure-browser.sh || exit 1

# The broker users every service's tests run as ("test.tori.<name>", the permissions
# bin/bootstrap gives the real ones), made once, not per test: their password is kept in the
# user's cache folder (or TEST_AMQP_PASSWORD), so concurrent runs on one machine agree.
if ! (cd tools/bootstrap && go run . -test-users); then
  echo "FAILED: making the test broker users"; exit 1
fi

# Vault is built from source for the apps service's Vault-backed tests: minutes the first
# time, cached after. It compiles while the other modules are tested.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${VAULT_BIN:-}" ]; then
  scripts/vault-dev-build.sh >"$work/vault.path" 2>"$work/vault.log" &
  vault_pid=$!
fi
# The S3 server (scripts/objectstore-build.sh), for pkg/objectstore's contract and access
# tests and bootstrap's: minutes the first time, cached after. It compiles while the broker
# restart test runs; pkg waits for it.
if [ -z "${OBJECTSTORE_BIN:-}" ]; then
  scripts/objectstore-build.sh >"$work/objectstore.path" 2>"$work/objectstore.log" &
  objectstore_pid=$!
fi
wait_for_objectstore() {
  [ -n "${OBJECTSTORE_BIN:-}" ] && return 0
  [ -z "${objectstore_failed:-}" ] || return 0 # said once already
  if ! wait "$objectstore_pid"; then
    objectstore_failed=1
    echo "building the S3 server failed:"; tail -30 "$work/objectstore.log"; return 1
  fi
  OBJECTSTORE_BIN=$(tail -1 "$work/objectstore.path")
  export OBJECTSTORE_BIN
}
# Jaeger, the trace store tests/e2e's traces test reads (scripts/tracestore.sh): minutes the
# first time, cached after. It compiles while the other modules are tested.
if [ -z "${TRACESTORE_BIN:-}" ]; then
  scripts/tracestore.sh >"$work/tracestore.path" 2>"$work/tracestore.log" &
  tracestore_pid=$!
fi
wait_for_tracestore() {
  [ -n "${TRACESTORE_BIN:-}" ] && return 0
  if ! wait "$tracestore_pid"; then
    echo "building the trace store failed:"; tail -30 "$work/tracestore.log"; return 1
  fi
  TRACESTORE_BIN=$(tail -1 "$work/tracestore.path")
  export TRACESTORE_BIN
}
# stripe-mock, for billing's Stripe adapter tests and the billing e2e test: seconds to build
# the first time, cached after.
if [ -z "${STRIPE_MOCK_BIN:-}" ]; then
  if ! STRIPE_MOCK_BIN=$(scripts/stripe-mock-build.sh); then
    echo "FAILED: building stripe-mock"; exit 1
  fi
  export STRIPE_MOCK_BIN
fi
# Pebble, the ACME test server the zone agent's HTTPS tests order certificates from: about half a
# minute to build the first time, cached after. It compiles while the other modules are tested.
if [ -z "${PEBBLE_BIN:-}" ]; then
  scripts/pebble-build.sh >"$work/pebble.path" 2>"$work/pebble.log" &
  pebble_pid=$!
fi
wait_for_pebble() {
  [ -n "${PEBBLE_BIN:-}" ] && return 0
  if ! wait "$pebble_pid"; then
    echo "building Pebble failed:"; tail -30 "$work/pebble.log"; return 1
  fi
  PEBBLE_BIN=$(tail -1 "$work/pebble.path")
  export PEBBLE_BIN
}
needs_vault() { [ "$1" = "services/apps" ]; }
wait_for_vault() {
  [ -n "${VAULT_BIN:-}" ] && return 0
  if ! wait "$vault_pid"; then
    echo "building Vault failed:"; tail -30 "$work/vault.log"; return 1
  fi
  VAULT_BIN=$(tail -1 "$work/vault.path")
  export VAULT_BIN
}

fail=0
failed=()
test_module() {
  local mod=$1
  echo "=== module $mod"
  if ! (cd "$mod" && go vet ./...); then
    fail=1; failed+=("$mod (vet)")
  fi
  # The end-to-end suite starts a whole stack per test, most of them one after another.
  local timeout=15m
  [ "$mod" = tests/e2e ] && timeout=35m
  if ! (cd "$mod" && go test -count=1 -p 4 -timeout "$timeout" ./...); then
    fail=1; failed+=("$mod")
  fi
}

# Restarts the real broker (rabbitmqctl stop_app/start_app), so nothing else may run meanwhile.
# It goes first: a restart recovers every durable queue, and the other tests leave hundreds of
# short-lived ones behind (a broker limited to 1024 files wedges recovering over ~900).
echo "=== broker restart (alone)"
if ! (cd pkg && go test -count=1 -tags brokerrestart -run 'TestBrokerRestart' -timeout 10m -v ./bus/ 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|restart|\.go:[0-9]+: '; exit "${PIPESTATUS[0]}"); then
  fail=1; failed+=("broker restart")
fi

later=()
for mod in $(scripts/modules.sh); do
  if needs_vault "$mod"; then later+=("$mod"); continue; fi
  if [ "$mod" = tests/e2e ] && ! wait_for_tracestore; then fail=1; failed+=("trace store build"); fi
  if ! wait_for_objectstore; then fail=1; failed+=("S3 server build"); fi
  if { [ "$mod" = services/zoneagent ] || [ "$mod" = tests/e2e ]; } && ! wait_for_pebble; then fail=1; failed+=("pebble build"); fi
  test_module "$mod"
done
if [ ${#later[@]} -gt 0 ]; then
  if wait_for_vault; then
    for mod in "${later[@]}"; do test_module "$mod"; done
  else
    fail=1; failed+=("vault build")
  fi
elif [ -n "${vault_pid:-}" ]; then
  wait "$vault_pid" || true
fi

if [ "$fail" -ne 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all modules passed"
