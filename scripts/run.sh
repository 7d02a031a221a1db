#!/usr/bin/env bash
# Starts every built service in the foreground. Ctrl-C or SIGTERM stops them all; if one
# exits, the rest are stopped too. Configuration is by environment (see README.md).
#
# The gateway starts only once every other service it started answers /readyz, and the API is
# announced only once the gateway's own /readyz agrees, so the first request never meets a
# service that is still binding its queues. A service not ready within READY_TIMEOUT seconds
# stops everything, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the control plane stands on (Postgres, RabbitMQ, Redis, the zone's Postgres cluster and
# PgBouncer, the sandbox's tools): the same idempotent step as `make test` and .ci/run, so a
# fresh machine needs no command before this one. Seconds when everything is already there.
scripts/ensure-services.sh

export DATA_DIR="${DATA_DIR:-$PWD/var}"
mkdir -p "$DATA_DIR"
# The S3 server every blob is to live in (docs/objectstore.md): the Versity S3 gateway, built
# once by scripts/objectstore-build.sh, its buckets and accounts under $DATA_DIR/objectstore.
# Its root key is made for this run and handed to bin/bootstrap alone, which makes (or keeps)
# each workload's account and bucket; the accounts persist in the gateway's IAM folder.
objectstore_bin=$(scripts/objectstore-build.sh)
OBJECTSTORE_ADDR="${OBJECTSTORE_ADDR:-127.0.0.1:7070}"
export OBJECT_STORE_URL="${OBJECT_STORE_URL:-http://$OBJECTSTORE_ADDR}"
mkdir -p "$DATA_DIR/objectstore/data" "$DATA_DIR/objectstore/iam"
objectstore_root=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
ROOT_ACCESS_KEY=tori-root ROOT_SECRET_KEY="$objectstore_root" \
  "$objectstore_bin" --port "$OBJECTSTORE_ADDR" --iam-dir "$DATA_DIR/objectstore/iam" --quiet \
  posix "$DATA_DIR/objectstore/data" >>"$DATA_DIR/objectstore.log" 2>&1 &
objectstore_pid=$!
trap 'kill -TERM "$objectstore_pid" 2>/dev/null || true' EXIT
echo "started the object store (pid $objectstore_pid; its log: $DATA_DIR/objectstore.log)" >&2
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/${OBJECTSTORE_ADDR%:*}/${OBJECTSTORE_ADDR##*:}") 2>/dev/null && break
  kill -0 "$objectstore_pid" 2>/dev/null || { echo "FAILED: the object store exited; see $DATA_DIR/objectstore.log" >&2; exit 1; }
  sleep 0.1
done
# ZONES=2: a second zone on this machine (ZONE2_ID, default us) beside the first (ZONE_ID,
# default local), the regions mapped onto them (ZONE_EU → the first, ZONE_US → the second);
# REPLICAS=2: a second process of every control-plane service and a second gateway routing
# to those. docs/configuration.md, "Two zones and replicas".
ZONES="${ZONES:-1}"
REPLICAS="${REPLICAS:-1}"
case "$ZONES$REPLICAS" in 11|12|21|22) ;; *) echo "ZONES and REPLICAS are 1 or 2" >&2; exit 2 ;; esac
ZONE2_ID="${ZONE2_ID:-us}"
if [ "$ZONES" = 2 ]; then
  export ZONE_EU="${ZONE_EU:-${ZONE_ID:-local}}" ZONE_US="${ZONE_US:-$ZONE2_ID}"
fi
if [ "$REPLICAS" = 2 ]; then
  # Two gateways count one client's windows together.
  export RATE_LIMIT_STORE="${RATE_LIMIT_STORE:-redis}" REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
fi

# The admin URLs reach bin/bootstrap alone: it makes each service's Postgres role and broker
# user and writes their credentials to $DATA_DIR/secrets/<name>.env (kept across runs). No
# service ever sees an admin URL.
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tori?sslmode=disable}" \
AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}" \
OBJECT_STORE_ADMIN_ACCESS_KEY=tori-root OBJECT_STORE_ADMIN_SECRET_KEY="$objectstore_root" \
EXTRA_ZONE_IDS="$([ "$ZONES" = 2 ] && echo "$ZONE2_ID")" \
  bin/bootstrap
unset DATABASE_URL AMQP_URL objectstore_root
# The key the gateway signs callers with and every service verifies. A fresh one per run
# unless given: it guards only traffic between these processes.
export GATEWAY_SIGNING_KEY="${GATEWAY_SIGNING_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
READY_TIMEOUT="${READY_TIMEOUT:-60}"
# The console's calls to the API leave from a loopback address of its own, the one address
# whose X-Forwarded-For the gateway trusts here: per-address limits see each browser, and a
# local client that sends the header is still counted by its own address.
export CONSOLE_API_SOURCE_ADDR="${CONSOLE_API_SOURCE_ADDR:-127.0.0.2}"
export TRUSTED_PROXIES="${TRUSTED_PROXIES:-$CONSOLE_API_SOURCE_ADDR}"
# The gateway's /metrics, apart from its public port (every other process serves /metrics on
# its own address, which only operators reach).
export GATEWAY_METRICS_ADDR="${GATEWAY_METRICS_ADDR:-127.0.0.1:8190}"

# The zone's edge and database host answer /readyz on addresses of their own; left unset the
# agent would pick free ports, so make run names them (the second zone's are in zone2_env).
export ZONE_EDGE_HEALTH_ADDR="${ZONE_EDGE_HEALTH_ADDR:-127.0.0.1:8108}"
export ZONE_DATABASES_HEALTH_ADDR="${ZONE_DATABASES_HEALTH_ADDR:-127.0.0.1:8109}"

# Where each process answers /readyz: its listen address (the zone agent's is its health
# address, not the edge). Defaults as in docs/configuration.md.
declare -A health=(
  [identity]="${IDENTITY_ADDR:-127.0.0.1:8101}"
  [billing]="${BILLING_ADDR:-127.0.0.1:8102}"
  [apps]="${APPS_ADDR:-127.0.0.1:8103}"
  [deploys]="${DEPLOYS_ADDR:-127.0.0.1:8104}"
  [logs]="${LOGS_ADDR:-127.0.0.1:8105}"
  [databases]="${DATABASES_ADDR:-127.0.0.1:8106}"
  [zoneagent]="${ZONEAGENT_ADDR:-127.0.0.1:8107}"
  [zoneagent-edge]="$ZONE_EDGE_HEALTH_ADDR"
  [gateway]="${GATEWAY_ADDR:-127.0.0.1:8080}"
)
services=(identity billing apps deploys logs databases zoneagent)
# The services the gateway routes to; zoneagent is not one.
upstreams=" identity billing apps deploys logs databases "

# What the second zone's agent has of its own (the first keeps the defaults above): its data,
# health and edge addresses, pooler port and app uids. Two zones on one host must never give
# the same uid (their files, processes and firewall rules would be shared), so the second
# range starts where the first's (ZONE_APP_UID_BASE, 200000 + 100000) ends.
zone2_env=(
  "ZONE_ID=$ZONE2_ID"
  "DATA_DIR=$DATA_DIR/zones/$ZONE2_ID"
  "ZONEAGENT_ADDR=${ZONE2_ZONEAGENT_ADDR:-127.0.0.1:8117}"
  "ZONE_EDGE_HEALTH_ADDR=${ZONE2_EDGE_HEALTH_ADDR:-127.0.0.1:8118}"
  "EDGE_ADDR=${ZONE2_EDGE_ADDR:-127.0.0.1:8091}"
  "EDGE_TLS_ADDR=${ZONE2_EDGE_TLS_ADDR:-127.0.0.1:8453}"
  "ZONE_POOLER_PORT=${ZONE2_POOLER_PORT:-6442}"
  "ZONE_POOLER_ADDR=127.0.0.1:${ZONE2_POOLER_PORT:-6442}"
  "ZONE_DATABASES_HEALTH_ADDR=${ZONE2_DATABASES_HEALTH_ADDR:-127.0.0.1:8119}"
  "ZONE_APP_UID_BASE=${ZONE2_APP_UID_BASE:-500000}"
  "ZONE_APP_UID_COUNT=${ZONE2_APP_UID_COUNT:-100000}"
)
if [ "$ZONES" = 2 ]; then
  lo1=${ZONE_APP_UID_BASE:-200000} hi1=$(( ${ZONE_APP_UID_BASE:-200000} + ${ZONE_APP_UID_COUNT:-100000} ))
  lo2=${ZONE2_APP_UID_BASE:-500000} hi2=$(( ${ZONE2_APP_UID_BASE:-500000} + ${ZONE2_APP_UID_COUNT:-100000} ))
  if (( lo1 < hi2 && lo2 < hi1 )); then
    echo "the zones' app uids overlap ($lo1-$((hi1-1)) and $lo2-$((hi2-1))): set ZONE2_APP_UID_BASE past the first range" >&2
    exit 2
  fi
  if [ "$ZONE2_ID" = "${ZONE_ID:-local}" ]; then
    echo "ZONE2_ID must differ from ZONE_ID (${ZONE_ID:-local})" >&2
    exit 2
  fi
  mkdir -p "$DATA_DIR/zones/$ZONE2_ID"
  health[zoneagent-$ZONE2_ID]="${ZONE2_ZONEAGENT_ADDR:-127.0.0.1:8117}"
  health[zoneagent-$ZONE2_ID-edge]="${ZONE2_EDGE_HEALTH_ADDR:-127.0.0.1:8118}"
fi
# Each second replica's address: its first's port plus 100 (identity 8201 …, the gateway 8180).
declare -A replica_addr=()
for name in identity billing apps deploys logs databases; do
  addr=${health[$name]}
  replica_addr[$name]="${addr%:*}:$(( ${addr##*:} + 100 ))"
done

declare -A pid_of=()
pids=("$objectstore_pid")
stop() {
  trap - INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'stop; exit 0' INT TERM

# start runs service $1 with its own credentials (and nobody else's) added to its environment.
# The zone agent serves no signed route: it gets no signing key (docs/conventions.md, "Who
# holds which secret").
start() { start_as "$1" "$1" "$1"; }

# start_as runs process $1 from bin/$2 with the credentials in $3.env, then the settings
# VAR=value given after them (a second zone's, a replica's address) over the rest.
start_as() {
  local name=$1 binary=$2 secrets=$3
  shift 3
  (
    if [ "$binary" = zoneagent ]; then unset GATEWAY_SIGNING_KEY; fi
    set -a
    # shellcheck disable=SC1090
    if [ -f "$DATA_DIR/secrets/$secrets.env" ]; then . "$DATA_DIR/secrets/$secrets.env"; fi
    set +a
    for setting in "$@"; do export "${setting?}"; done
    exec "bin/$binary"
  ) &
  pids+=("$!")
  pid_of[$name]=$!
  echo "started $name (pid $!)" >&2
}

# status prints the HTTP status of GET http://$1$2, or nothing when there is no answer.
# Plain bash (/dev/tcp), so running needs no HTTP client installed.
status() {
  local host=${1%:*} port=${1##*:} line
  (
    exec 3<>"/dev/tcp/$host/$port" || exit 0
    printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&3
    IFS=' ' read -r -t 2 _ line _ <&3 && printf '%s' "$line"
  ) 2>/dev/null || true
}

# await waits until service $1 answers 200 on /readyz, saying once what it waits for and how
# long it took; it fails naming the service if the process exits or READY_TIMEOUT passes.
await() {
  local name=$1 addr=${health[$1]} start=$SECONDS
  echo "waiting for $name to be ready (http://$addr/readyz)" >&2
  while [ "$(status "$addr" /readyz)" != 200 ]; do
    if ! kill -0 "${pid_of[$name]}" 2>/dev/null; then
      echo "FAILED: $name exited before it was ready; stopping everything" >&2
      stop
      exit 1
    fi
    if (( SECONDS - start >= READY_TIMEOUT )); then
      echo "FAILED: $name is not ready after ${READY_TIMEOUT}s (http://$addr/readyz); stopping everything" >&2
      stop
      exit 1
    fi
    sleep 0.2
  done
  echo "$name ready after $((SECONDS - start))s" >&2
}

# TRACES=1: the trace store first (Jaeger, built once by scripts/tracestore.sh), and every
# process exports its spans to it. Its query API answers on TRACES_QUERY_ADDR.
if [ "${TRACES:-0}" = 1 ]; then
  tracestore=$(scripts/tracestore.sh)
  export TRACES_OTLP_ADDR="${TRACES_OTLP_ADDR:-127.0.0.1:4318}" TRACES_QUERY_ADDR="${TRACES_QUERY_ADDR:-127.0.0.1:16686}"
  "$tracestore" --config "$PWD/deployments/tracestore/jaeger.yaml" >>"$DATA_DIR/tracestore.log" 2>&1 &
  pids+=("$!")
  pid_of[tracestore]=$!
  echo "started the trace store (pid $!; its log: $DATA_DIR/tracestore.log)" >&2
  export OTEL_EXPORTER_OTLP_ENDPOINT="http://$TRACES_OTLP_ADDR"
fi

started=()
for name in "${services[@]}"; do
  [ -x "bin/$name" ] || continue
  start "$name"
  started+=("$name")
  # The zone agent starts its edge as a process of its own (unprivileged): awaited on its
  # own health address, and gone with the agent.
  if [ "$name" = zoneagent ]; then
    pid_of[zoneagent-edge]=${pid_of[zoneagent]}
    started+=(zoneagent-edge)
  fi
  if [ "$name" = zoneagent ] && [ "$ZONES" = 2 ]; then
    start_as "zoneagent-$ZONE2_ID" zoneagent "zoneagent-$ZONE2_ID" "${zone2_env[@]}"
    pid_of[zoneagent-$ZONE2_ID-edge]=${pid_of[zoneagent-$ZONE2_ID]}
    started+=("zoneagent-$ZONE2_ID" "zoneagent-$ZONE2_ID-edge")
  elif [ "$REPLICAS" = 2 ] && [[ $upstreams == *" $name "* ]]; then
    var="$(echo "$name" | tr '[:lower:]' '[:upper:]')_ADDR"
    health[$name-2]=${replica_addr[$name]}
    start_as "$name-2" "$name" "$name" "$var=${replica_addr[$name]}"
    started+=("$name-2")
  fi
done
if [ ! -x bin/gateway ]; then
  echo "no gateway binary in bin/: run make build" >&2
  stop
  exit 1
fi
ready_upstreams=()
for name in "${started[@]}"; do
  await "$name"
  if [[ $upstreams == *" $name "* ]]; then ready_upstreams+=("$name"); fi
done

# The gateway's /readyz waits for exactly the services started here; routes of a service
# that is not running answer 503 service_unavailable.
GATEWAY_READY_UPSTREAMS="${GATEWAY_READY_UPSTREAMS:-$(IFS=,; echo "${ready_upstreams[*]}")}"
export GATEWAY_READY_UPSTREAMS
start gateway
await gateway
if [ "$REPLICAS" = 2 ]; then
  # The second gateway routes to the second replicas, as a second pod would to its Services.
  health[gateway-2]="${GATEWAY2_ADDR:-127.0.0.1:8180}"
  gateway2_env=("GATEWAY_ADDR=${health[gateway-2]}" "GATEWAY_METRICS_ADDR=${GATEWAY2_METRICS_ADDR:-127.0.0.1:8191}")
  for name in identity billing apps deploys logs databases; do
    if [ -n "${pid_of[$name-2]:-}" ]; then
      gateway2_env+=("$(echo "$name" | tr '[:lower:]' '[:upper:]')_URL=http://${replica_addr[$name]}")
    fi
  done
  start_as gateway-2 gateway gateway "${gateway2_env[@]}"
  await gateway-2
  echo "Second gateway: http://${health[gateway-2]} (its metrics: ${GATEWAY2_METRICS_ADDR:-127.0.0.1:8191})" >&2
fi
if [ "$ZONES" = 2 ]; then
  echo "Zones: region eu → $ZONE_EU (edge ${EDGE_TLS_ADDR:-127.0.0.1:8443}), region us → $ZONE_US (edge ${ZONE2_EDGE_TLS_ADDR:-127.0.0.1:8453}, data $DATA_DIR/zones/$ZONE2_ID)" >&2
fi
echo "Tori is ready: http://${health[gateway]}" >&2
echo "Metrics: http://$GATEWAY_METRICS_ADDR/metrics (the gateway), http://<each service's address>/metrics" >&2
if [ "${TRACES:-0}" = 1 ]; then
  echo "Traces: http://$TRACES_QUERY_ADDR/api/traces?service=gateway (Jaeger's query API; README, \"Traces\")" >&2
fi
# The web console (bin/console serves the built page at CONSOLE_URL; it talks to BASE_URL).
if [ -x bin/console ]; then
  start console
  echo "Console: ${CONSOLE_URL:-http://127.0.0.1:5173}" >&2
fi

# Any service exiting takes the whole control plane down, so a failure is never silent.
set +e
wait -n
code=$?
echo "a service exited ($code); stopping the rest" >&2
stop
exit "$code"
