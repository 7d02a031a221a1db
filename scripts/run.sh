#!/usr/bin/env bash
# Starts every built service in the foreground. Ctrl-C or SIGTERM stops them all; if one
# exits, the rest are stopped too. Configuration is by environment (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tori?sslmode=disable}"
export AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}"
export DATA_DIR="${DATA_DIR:-$PWD/var}"
mkdir -p "$DATA_DIR"
# The key the gateway signs callers with and every service verifies. A fresh one per run
# unless given: it guards only traffic between these processes.
export GATEWAY_SIGNING_KEY="${GATEWAY_SIGNING_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"

# The gateway starts last so that it never routes to a service that is not listening yet.
order=(identity billing apps deploys logs databases zoneagent gateway)
pids=()
stop() {
  trap - INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'stop; exit 0' INT TERM

for name in "${order[@]}"; do
  [ -x "bin/$name" ] || continue
  "bin/$name" &
  pids+=("$!")
  echo "started $name (pid $!)" >&2
done
if [ ${#pids[@]} -eq 0 ]; then
  echo "no service binaries in bin/: run make build" >&2
  exit 1
fi
# Any service exiting takes the whole control plane down, so a failure is never silent.
set +e
wait -n
code=$?
echo "a service exited ($code); stopping the rest" >&2
stop
exit "$code"
