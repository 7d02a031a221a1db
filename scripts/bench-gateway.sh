#!/usr/bin/env bash
# Load test through the gateway: requests/s and p50/p99 for /healthz and for an authenticated
# GET /api/account spread over many accounts (so no per-account limit binds), side by side, so
# the cost of auth and rate limiting shows as a ratio; then app creates/s (accounts set to the
# largest plan by the operator command) and environment writes/s, likewise spread.
#
# Starts its own control plane on spare ports against a fresh database; needs wrk
# (`make bench-gateway` installs it). Tunables: ACCOUNTS (enough that no window of 600 fills
# at the rates measured: 4,000 accounts allow 160,000 req/s for 15 s; 2,000 ran out on a
# machine that answered 100,000), ENV_ACCOUNTS, FLOCK_ACCOUNTS, DURATION, CONNECTIONS, THREADS; WRITES=0
# skips the app creates and env writes.
# PROFILE_DIR=dir also writes, during the /api/account run, CPU, block and mutex profiles of the
# gateway and identity (their PROFILE_ADDR) and a system-wide `perf` profile (Postgres's share).
set -euo pipefail
cd "$(dirname "$0")/.."
ACCOUNTS=${ACCOUNTS:-4000}
DURATION=${DURATION:-15s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
FLOCK_ACCOUNTS=${FLOCK_ACCOUNTS:-300}
ENV_ACCOUNTS=${ENV_ACCOUNTS:-600}

work=$(mktemp -d)
run_id=$(date +%s)
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/tori_bench_${run_id}?sslmode=disable"
export AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}"
export BUS_NAMESPACE="bench${run_id}." BUS_QUEUE_TYPE=classic BUS_QUEUE_EXPIRES=10m
export DATA_DIR="$work/data" AUTH_LIMIT_PER_15MIN=1000000 LOG_LEVEL=warn
export GATEWAY_SIGNING_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export GATEWAY_ADDR=127.0.0.1:18080 IDENTITY_ADDR=127.0.0.1:18101 BILLING_ADDR=127.0.0.1:18102
export APPS_ADDR=127.0.0.1:18103 DEPLOYS_ADDR=127.0.0.1:18104 LOGS_ADDR=127.0.0.1:18105
export DATABASES_ADDR=127.0.0.1:18106 ZONEAGENT_ADDR=127.0.0.1:18107 EDGE_ADDR=127.0.0.1:18081 EDGE_TLS_ADDR=127.0.0.1:18443 ZONE_EDGE_HEALTH_ADDR=127.0.0.1:18108
export IDENTITY_URL=http://$IDENTITY_ADDR BILLING_URL=http://$BILLING_ADDR APPS_URL=http://$APPS_ADDR
export DEPLOYS_URL=http://$DEPLOYS_ADDR LOGS_URL=http://$LOGS_ADDR DATABASES_URL=http://$DATABASES_ADDR
unset SMTP_URL
mkdir -p "$DATA_DIR"
gw=http://$GATEWAY_ADDR

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS tori_bench_${run_id} WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# As `make run` does: the bootstrap alone reads the admin URLs, and each service runs with its
# own role and broker user from DATA_DIR/secrets/<name>.env.
bin/bootstrap >/dev/null
unset DATABASE_URL AMQP_URL
with_creds() {
  local svc=$1
  shift
  (
    set -a
    # shellcheck disable=SC1090
    . "$DATA_DIR/secrets/$svc.env"
    set +a
    exec "$@"
  )
}
PROFILE_DIR=${PROFILE_DIR:-}
declare -A profile_addr=([gateway]=127.0.0.1:18190 [identity]=127.0.0.1:18191)
declare -A pid_of=()
for svc in identity billing apps logs gateway; do
  [ -x "bin/$svc" ] || continue
  # One subshell that execs the service, so $! is the service's own pid for cleanup.
  (
    set -a
    # shellcheck disable=SC1090
    . "$DATA_DIR/secrets/$svc.env"
    if [ -n "$PROFILE_DIR" ] && [ -n "${profile_addr[$svc]:-}" ]; then
      PROFILE_ADDR=${profile_addr[$svc]} PROFILE_BLOCK_RATE=10000 PROFILE_MUTEX_FRACTION=10
    fi
    set +a
    exec "bin/$svc"
  ) >"$work/$svc.log" 2>&1 &
  pids+=("$!")
  pid_of[$svc]=$!
done
# Each service is ready once its consumers' queues are bound; the gateway once it answers.
for url in http://$IDENTITY_ADDR/readyz http://$BILLING_ADDR/readyz http://$APPS_ADDR/readyz http://$LOGS_ADDR/readyz http://$GATEWAY_ADDR/healthz; do
  for i in $(seq 1 120); do curl -fs "$url" >/dev/null && break; sleep 0.5; done
  curl -fs "$url" >/dev/null || { echo "$url did not answer"; tail -n 20 "$work"/*.log; exit 1; }
done

echo "signing in $ACCOUNTS accounts…" >&2
# Eight at a time: ask for every magic link, read the codes from the mail directory in one
# pass, then verify each. emails and tokens stay line for line the same accounts. The auth
# routes allow one address 600 requests a minute (ratelimit.PublicPerMinute), so the
# requests leave from 20 loopback addresses in turn (127.0.0.10-29), 200 each for 4,000.
export gw
seq 1 "$ACCOUNTS" | sed "s/.*/bench-&-$run_id@example.test/" >"$work/emails"
from() { awk '{ print "127.0.0." (10 + (NR - 1) % 20), $0 }'; }
from <"$work/emails" | xargs -P 8 -L1 sh -c 'curl -fs -o /dev/null --interface "$0" -X POST "$gw/api/auth/magic-link" \
  -H "Content-Type: application/json" -d "{\"email\":\"$1\"}"'
for _ in $(seq 1 500); do
  [ "$(find "$DATA_DIR/mail" -name '*.eml' 2>/dev/null | wc -l)" -ge "$ACCOUNTS" ] && break
  sleep 0.1
done
find "$DATA_DIR/mail" -name '*.eml' -exec awk '
  /^To: / { to = $2; sub(/\r$/, "", to) }
  match($0, /token=[A-Za-z0-9_-]+/) && !code { code = substr($0, RSTART + 6, RLENGTH - 6) }
  END { if (to != "" && code != "") print to, code }' {} \; >"$work/codes"
[ "$(wc -l <"$work/codes")" -ge "$ACCOUNTS" ] || { echo "only $(wc -l <"$work/codes") of $ACCOUNTS sign-in mails arrived"; exit 1; }
awk 'NR == FNR { code[$1] = $2; next } { print code[$1] }' "$work/codes" "$work/emails" | from |
  xargs -P 8 -L1 sh -c 'printf "%s %s\n" "$(curl -fs --interface "$0" -X POST "$gw/api/auth/magic-link/verify" -H "Content-Type: application/json" -d "{\"token\":\"$1\"}" | jq -r .token)" "$1"' >"$work/verified"
# Back in the emails' order: verified lines are "session-token code".
awk 'NR == FNR { code[$1] = $2; next } FILENAME == ARGV[2] { tok[$2] = $1; next } { print tok[code[$1]] }' \
  "$work/codes" "$work/verified" "$work/emails" >"$work/tokens"
if grep -qvE '^[A-Za-z0-9_.-]{16,}$' "$work/tokens" || [ "$(wc -l <"$work/tokens")" -ne "$ACCOUNTS" ]; then
  echo "sign-in failed for some accounts"; exit 1
fi

cat >"$work/rotate.lua" <<LUA
local tokens = {}
for line in io.lines("$work/tokens") do tokens[#tokens + 1] = line end
local i = 0
request = function()
  i = i % #tokens + 1
  return wrk.format("GET", "/api/account", { ["Authorization"] = "Bearer " .. tokens[i] })
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f errors=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end
LUA
cat >"$work/plain.lua" <<'LUA'
done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f errors=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end
LUA

health=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$work/plain.lua" "$gw/healthz" | grep RESULT)
# Warm the token cache, the account copy and the connection pools just before the reads: both
# keep an entry up to TOKEN_CACHE_TTL / ACCOUNT_CACHE_TTL (30 s, less a fifth at random), so a
# warm-up before the /healthz run expired all 4,000 accounts at once in the middle of this
# one, a wave that steady traffic spreads out (each account's entry is refreshed once in 24-30 s).
wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s "$work/rotate.lua" "$gw" >/dev/null
# CPU time (clock ticks) each part of the machine spends during the /api/account run, so the
# cost of a request shows by process.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_ticks() { local t=0 p; for p in $(pgrep -x postgres); do t=$((t + $(ticks "$p"))); done; echo "$t"; }
declare -A before=()
for svc in gateway identity; do before[$svc]=$(ticks "${pid_of[$svc]}"); done
before[postgres]=$(pg_ticks)
profilers=()
if [ -n "$PROFILE_DIR" ]; then
  mkdir -p "$PROFILE_DIR"
  secs=$(( ${DURATION%s} - 3 ))
  for svc in gateway identity; do
    curl -fs -o "$PROFILE_DIR/$svc.cpu.pprof" "http://${profile_addr[$svc]}/debug/pprof/profile?seconds=$secs" &
    profilers+=("$!")
  done
  if command -v perf >/dev/null; then
    perf record -q -F 199 -a -g -o "$PROFILE_DIR/perf.data" -- sleep "$secs" >/dev/null 2>&1 &
    profilers+=("$!")
  fi
fi
account=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$work/rotate.lua" "$gw" | grep RESULT)
account_requests=$(( $(echo "$account" | sed -E 's/.*rps=([0-9]+).*/\1/') * ${DURATION%s} ))
# A refused request (a 429 once an account's window is full) is cheaper than an answer: a run
# with any is no measurement. More ACCOUNTS spread the load.
for r in "$health" "$account"; do
  case "$r" in *" errors=0 non2xx=0"*) ;; *) echo "not every request was answered 2xx: $r (raise ACCOUNTS?)" >&2; exit 1 ;; esac
done
cpu_split=""
for svc in gateway identity postgres; do
  if [ "$svc" = postgres ]; then now=$(pg_ticks); else now=$(ticks "${pid_of[$svc]}"); fi
  used=$(( now - before[$svc] ))
  cpu_split+="$(awk -v t="$used" -v n="$account_requests" -v hz="$(getconf CLK_TCK)" -v s="$svc" \
    'BEGIN { printf "%s %.1f µs", s, t / hz / n * 1e6 }'), "
done
echo "healthz: $health; account: $account; $cpu_split" >&2
if [ -n "$PROFILE_DIR" ]; then
  wait "${profilers[@]}" || true
  for svc in gateway identity; do
    for kind in block mutex; do
      curl -fs -o "$PROFILE_DIR/$svc.$kind.pprof" "http://${profile_addr[$svc]}/debug/pprof/$kind" || true
    done
  done
  echo "profiles in $PROFILE_DIR (go tool pprof -top bin/gateway $PROFILE_DIR/gateway.cpu.pprof; perf report -i $PROFILE_DIR/perf.data --sort comm)" >&2
fi
# Writes. Every account gets one app for environment writes; the first FLOCK_ACCOUNTS are
# moved to the largest plan (the operator command) for app creates.
creates="skipped (WRITES=0)" envs="skipped (WRITES=0)"
if [ "${WRITES:-1}" != 0 ]; then
echo "creating one app for each of $ENV_ACCOUNTS accounts, moving $FLOCK_ACCOUNTS accounts to flock…" >&2
export empty='{}' # xargs would replace a literal {} in the command
head -n "$ENV_ACCOUNTS" "$work/tokens" |
  xargs -P 8 -I{} sh -c 'printf "%s %s\n" {} "$(curl -fs -X POST "$gw/api/apps" -H "Authorization: Bearer {}" -H "Content-Type: application/json" -d "$empty" | jq -r .slug)"' >"$work/envtargets"
if awk 'NF != 2 || $2 == "null"' "$work/envtargets" | grep -q .; then echo "app creates failed"; exit 1; fi
# Eight at a time; the waits are the pipe's subshell's, never the services' (children of this
# shell).
head -n "$FLOCK_ACCOUNTS" "$work/emails" | {
  n=0
  while read -r email; do
    with_creds billing bin/billing set-plan -account "$email" -plan flock >/dev/null &
    if (( ++n % 8 == 0 )); then wait; fi
  done
  wait
}
head -n "$FLOCK_ACCOUNTS" "$work/tokens" >"$work/flock-tokens"
while read -r tok; do
  for i in $(seq 1 100); do
    [ "$(curl -fs "$gw/api/account" -H "Authorization: Bearer $tok" | jq -r .plan)" = flock ] && break
    [ "$i" = 100 ] && { echo "an account did not reach flock" >&2; exit 1; }
    sleep 0.1
  done
done <"$work/flock-tokens"

result_fn='done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f errors=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end'
cat >"$work/create.lua" <<LUA
local tokens = {}
for line in io.lines("$work/flock-tokens") do tokens[#tokens + 1] = line end
local i, n = 0, 0
setup = function(thread) thread:set("tag", tostring(math.random(1, 1e9))) end
request = function()
  i = i % #tokens + 1
  n = n + 1
  local body = string.format('{"name":"b%s-%d","kind":"service"}', tag, n)
  return wrk.format("POST", "/api/apps", { ["Authorization"] = "Bearer " .. tokens[i], ["Content-Type"] = "application/json" }, body)
end
$result_fn
LUA
cat >"$work/env.lua" <<LUA
local targets = {}
for line in io.lines("$work/envtargets") do
  local tok, slug = line:match("(%S+) (%S+)")
  targets[#targets + 1] = { tok = tok, slug = slug }
end
local i, n = 0, 0
request = function()
  i = i % #targets + 1
  n = n + 1
  local t = targets[i]
  local body = string.format('{"key":"KEY_%d","value":"value-%d-with-some-length"}', n % 50, n)
  return wrk.format("PUT", "/api/apps/" .. t.slug .. "/env", { ["Authorization"] = "Bearer " .. t.tok, ["Content-Type"] = "application/json" }, body)
end
$result_fn
LUA
# Creates are capped by the plan (50 apps each): keep the run short enough to stay under it.
creates=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${CREATE_DURATION:-5s}" -s "$work/create.lua" "$gw" | grep RESULT)
envs=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$work/env.lua" "$gw" | grep RESULT)
for r in "$creates" "$envs"; do
  case "$r" in *" errors=0 non2xx=0"*) ;; *) echo "not every write was answered 2xx: $r (raise FLOCK_ACCOUNTS?)" >&2; exit 1 ;; esac
done
fi

rps() { echo "$1" | sed -E 's/.*rps=([0-9]+).*/\1/'; }
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ACCOUNTS accounts, $(nproc) cores"
echo "GET /healthz               $health"
echo "GET /api/account (auth'd)  $account"
awk -v a="$(rps "$account")" -v h="$(rps "$health")" 'BEGIN { printf "ratio account/healthz throughput = %.2f\n", a / h }'
echo "CPU per /api/account request: ${cpu_split%, }"
echo "POST /api/apps             $creates"
echo "PUT /api/apps/{slug}/env   $envs"
