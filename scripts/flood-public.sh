#!/usr/bin/env bash
# Floods stay with the flooder (issue 25): from 127.0.0.1, wrk floods GET /api/plans and
# POST /api/auth/cli/token (an unknown device code) at the gateway's full rate for FLOOD
# seconds, while a signed-in client at another address (127.0.0.2, in the loopback range)
# reads GET /api/account and GET /api/billing every 100 ms during the flood and for AFTER
# seconds after it. Prints both sides' counts by status and exits non-zero if the client saw
# anything but 200. A load script, not a timed test: `make flood-public` (needs wrk, which the
# target installs). Starts its own identity, billing and gateway on spare ports against a
# fresh database, as scripts/bench-gateway.sh does. Tunables: FLOOD (30), AFTER (35),
# CONNECTIONS (64), THREADS (2), CLIENT_ADDR (127.0.0.2).
set -euo pipefail
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-30}
AFTER=${AFTER:-35}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
CLIENT_ADDR=${CLIENT_ADDR:-127.0.0.2}

work=$(mktemp -d)
run_id=$(date +%s)
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/tori_flood_${run_id}?sslmode=disable"
export AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}"
export BUS_NAMESPACE="flood${run_id}." BUS_QUEUE_TYPE=classic BUS_QUEUE_EXPIRES=10m
export DATA_DIR="$work/data" LOG_LEVEL=warn
export GATEWAY_SIGNING_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export GATEWAY_ADDR=127.0.0.1:18280 IDENTITY_ADDR=127.0.0.1:18281 BILLING_ADDR=127.0.0.1:18282
export IDENTITY_URL=http://$IDENTITY_ADDR BILLING_URL=http://$BILLING_ADDR
export GATEWAY_READY_UPSTREAMS=identity,billing
unset SMTP_URL
mkdir -p "$DATA_DIR"
gw=http://$GATEWAY_ADDR

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS tori_flood_${run_id} WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
bin/bootstrap >/dev/null
unset DATABASE_URL AMQP_URL
for svc in identity billing gateway; do
  (
    set -a
    # shellcheck disable=SC1090
    . "$DATA_DIR/secrets/$svc.env"
    set +a
    exec "bin/$svc"
  ) >"$work/$svc.log" 2>&1 &
  pids+=("$!")
done
for url in http://$IDENTITY_ADDR/readyz http://$BILLING_ADDR/readyz $gw/readyz; do
  for _ in $(seq 1 120); do curl -fs "$url" >/dev/null && break; sleep 0.5; done
  curl -fs "$url" >/dev/null || { echo "$url did not answer"; tail -n 20 "$work"/*.log; exit 1; }
done

# Sign in from the client's address.
email="flood-client-$run_id@example.test"
curl -fs -o /dev/null --interface "$CLIENT_ADDR" -X POST "$gw/api/auth/magic-link" -H 'Content-Type: application/json' -d "{\"email\":\"$email\"}"
code=""
for _ in $(seq 1 100); do
  code=$(grep -rhoE 'token=[A-Za-z0-9_-]+' "$DATA_DIR/mail" 2>/dev/null | head -1 | cut -d= -f2 || true)
  [ -n "$code" ] && break
  sleep 0.1
done
[ -n "$code" ] || { echo "no sign-in mail arrived"; exit 1; }
token=$(curl -fs --interface "$CLIENT_ADDR" -X POST "$gw/api/auth/magic-link/verify" -H 'Content-Type: application/json' -d "{\"token\":\"$code\"}" | jq -r .token)
[ -n "$token" ] && [ "$token" != null ] || { echo "sign-in failed"; exit 1; }

# wrk counts each status across its threads.
counting='local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function(args) counts = {} end
response = function(status, headers, body) counts[status] = (counts[status] or 0) + 1 end
done = function(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("counts")) do total[status] = (total[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(total) do parts[#parts + 1] = status .. "=" .. n end
  table.sort(parts)
  io.write(string.format("RESULT rps=%.0f errors=%d %s\n", summary.requests / (summary.duration / 1e6),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, table.concat(parts, " ")))
end'
printf '%s\n' "$counting" >"$work/plans.lua"
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n%s\n' \
  "'{\"deviceCode\":\"not-a-device-code\"}'" "$counting" >"$work/token.lua"

echo "flooding from 127.0.0.1 for ${FLOOD}s; client at $CLIENT_ADDR reads every 100 ms for $((FLOOD + AFTER))s" >&2
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${FLOOD}s" -s "$work/plans.lua" "$gw/api/plans" >"$work/plans.out" 2>&1 &
flood_plans=$!
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${FLOOD}s" -s "$work/token.lua" "$gw/api/auth/cli/token" >"$work/token.out" 2>&1 &
flood_token=$!

declare -A seen=()
end=$(( $(date +%s%N) / 1000000 + (FLOOD + AFTER) * 1000 ))
while [ "$(( $(date +%s%N) / 1000000 ))" -lt "$end" ]; do
  for path in /api/account /api/billing; do
    status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --interface "$CLIENT_ADDR" -H "Authorization: Bearer $token" "$gw$path" || true)
    key="$path=$status"
    seen[$key]=$(( ${seen[$key]:-0} + 1 ))
  done
  sleep 0.1
done
wait "$flood_plans" "$flood_token" || true

echo "flooder GET /api/plans:            $(grep RESULT "$work/plans.out" || tail -n 3 "$work/plans.out")"
echo "flooder POST /api/auth/cli/token:  $(grep RESULT "$work/token.out" || tail -n 3 "$work/token.out")"
bad=0
for key in "${!seen[@]}"; do
  echo "client $key: ${seen[$key]}"
  case "$key" in *=200) ;; *) bad=1 ;; esac
done
if [ "$bad" != 0 ]; then
  echo "FAIL: the client at $CLIENT_ADDR saw answers other than 200" >&2
  exit 1
fi
echo "ok: the client saw only 200s"
