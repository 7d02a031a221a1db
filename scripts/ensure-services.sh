#!/usr/bin/env bash
# Makes sure the local Postgres, RabbitMQ and Redis are up, starting them if not, with the
# zone's Postgres cluster, PgBouncer and the sandbox's tools, and waits until all answer.
# `make run`, `make test` and `.ci/run` all begin with it: on a machine where everything is
# there it only checks (about a second) and prints one line; otherwise one line per thing it
# installs or starts.
set -euo pipefail
began=$SECONDS

# The zone agent's sandbox (services/zoneagent/README.md, "The sandbox"): bubblewrap for the
# namespaces, pasta (passt) for each app's network, nftables for its egress rules, e2fsprogs
# for each app's disk image, util-linux's nsenter and prlimit. Installed once, when missing.
sandbox_tools() {
  local missing=()
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v pasta >/dev/null 2>&1 || missing+=(passt)
  command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || missing+=(nftables)
  command -v mkfs.ext4 >/dev/null 2>&1 || [ -x /usr/sbin/mkfs.ext4 ] || missing+=(e2fsprogs)
  command -v nsenter >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1 || missing+=(util-linux)
  # The sandbox's first process, so bubblewrap's own (with its memory) is not.
  command -v tini-static >/dev/null 2>&1 || command -v tini >/dev/null 2>&1 || missing+=(tini)
  # The sandbox's own tests: test hosts in network namespaces, and a probe app in Python.
  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing+=(iproute2)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  # The toolchains customers' builds use (services/zoneagent/README.md, "Builds without a
  # manifest"), from the system under /usr, which every sandbox sees read-only: nothing is
  # downloaded at build time. Node.js from any source that put it under /usr (Debian's, or
  # NodeSource's, which brings its own npm); Go is the one that builds this project.
  { [ -x /usr/bin/node ] || [ -x /usr/local/bin/node ]; } || missing+=(nodejs)
  { [ -x /usr/bin/npm ] || [ -x /usr/local/bin/npm ]; } || missing+=(npm)
  /usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
  if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    printf 'installing %s (the zone sandbox)\n' "${missing[@]}"
    # The first try fails quietly on a machine whose package lists are empty or stale.
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y "${missing[@]}" >/dev/null 2>&1 || {
      apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y "${missing[@]}" >/dev/null
    } || echo "could not install ${missing[*]}: the zone will refuse source deploys" >&2
  fi
  # pasta, running as each app's uid, opens /dev/net/tun to make the app's interface; most
  # distributions leave it 0666 (opening it grants nothing outside one's own namespaces).
  if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != "666" ] && [ "$(id -u)" = 0 ]; then
    echo "making /dev/net/tun usable by each app's user (mode 0666)"
    chmod 0666 /dev/net/tun
  fi
}
sandbox_tools

# system_user NAME WHY makes the system user NAME (no home, no shell, a group of its own)
# when missing, as root; the zone agent starts a process of its as that user.
system_user() {
  id "$1" >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || { echo "no user $1 and not root to make it: $2 runs as the agent's own user" >&2; return 0; }
  echo "making the system user $1 ($2)"
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1" \
    || echo "could not make the user $1" >&2
}
# The zone's database host (services/zoneagent/docs/database-host.md): neither root nor postgres.
system_user tori-dbhost "the zone's database host"
# The zone's edge runs as its own user, with only the capability to bind its ports
# (services/zoneagent/docs/edge-process.md); setpriv (util-linux) drops the rest.
system_user "${ZONE_EDGE_USER:-tori-edge}" "the zone's edge"

# The zone's own Postgres cluster (port 5433) and PgBouncer, for managed databases.
"$(dirname "$0")/zone-postgres.sh" || echo "the zone's Postgres is not running: managed databases will fail" >&2

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
rabbit_up() { rabbitmq-diagnostics -q check_port_connectivity >/dev/null 2>&1; }
# The gateways' shared rate-limit windows (RATE_LIMIT_STORE=redis) and their tests. Plain bash,
# so checking needs no redis-cli.
redis_up() {
  local reply
  reply=$( (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && IFS= read -r -t 2 line <&3 && printf '%s' "$line") 2>/dev/null) || return 1
  [[ "$reply" == +PONG* ]]
}

if ! pg_up; then
  echo "starting Postgres"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
fi
if ! rabbit_up && command -v rabbitmqctl >/dev/null 2>&1 && timeout 20 rabbitmqctl -q ping >/dev/null 2>&1; then
  # The node runs but its app was stopped (a broker-restart test ended between stop_app and
  # start_app): starting the server again would fail on the running node.
  echo "starting RabbitMQ's app on the running node"
  timeout 60 rabbitmqctl -q start_app || true
fi
if ! rabbit_up; then
  echo "starting RabbitMQ"
  # Debian's wrapper re-enters as the rabbitmq user through su, which resets the open-file
  # limit to 1024; a restart must reopen every durable queue, and wedges past that. So start
  # the server script as that user with the limit raised to what the system allows.
  if id rabbitmq >/dev/null 2>&1 && [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    su rabbitmq -s /bin/sh -c 'ulimit -n "$(ulimit -Hn)"; /usr/lib/rabbitmq/bin/rabbitmq-server -detached' || true
  else
    rabbitmq-server -detached || true
  fi
fi
if ! redis_up; then
  if ! command -v redis-server >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "installing redis-server"
    DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >/dev/null ||
      { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >/dev/null; } || true
  fi
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
for i in $(seq 1 120); do
  if pg_up && rabbit_up && redis_up; then
    echo "services ready: Postgres, RabbitMQ, Redis, the zone's Postgres and the sandbox tools ($((SECONDS - began))s)"
    exit 0
  fi
  sleep 1
done
pg_up || echo "Postgres does not answer on 127.0.0.1:5432" >&2
rabbit_up || echo "RabbitMQ does not answer on 127.0.0.1:5672" >&2
redis_up || echo "Redis does not answer on 127.0.0.1:6379" >&2
exit 1
