#!/usr/bin/env bash
# Vets and tests every module in go.work (`go test ./...` at the root would test none of
# them), then runs the tests that must have the broker to themselves.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
scripts/ensure-services.sh || exit 1

fail=0
failed=()
for mod in $(scripts/modules.sh); do
  echo "=== module $mod"
  if ! (cd "$mod" && go vet ./...); then
    fail=1; failed+=("$mod (vet)")
  fi
  if ! (cd "$mod" && go test -count=1 -p 4 -timeout 15m ./...); then
    fail=1; failed+=("$mod")
  fi
done

# Restarts the real broker (rabbitmqctl stop_app/start_app): nothing else may run meanwhile.
echo "=== broker restart (alone)"
if ! (cd pkg && go test -count=1 -tags brokerrestart -run 'TestBrokerRestart' -timeout 10m -v ./bus/ 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|restart'; exit "${PIPESTATUS[0]}"); then
  fail=1; failed+=("broker restart")
fi

if [ "$fail" -ne 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all modules passed"
