#!/usr/bin/env bash
# The zone's own Postgres for managed databases (decisions.md, "Managed database"): a second
# local cluster, "zone" on port 5433, of the same major version as the control plane's
# (5432), and Debian's PgBouncer for the zone agent to run in front of it. Made once; run
# again it only starts what has stopped. The control plane's cluster is never touched.
#
# Authentication in the zone cluster: every TCP connection needs a password
# (scram-sha-256); over the Unix socket the OS user postgres, and root (who runs
# bin/bootstrap and the tests here), may log in as postgres by peer. bin/bootstrap then makes
# the zone's provisioning role (LOGIN CREATEDB CREATEROLE, not a superuser) with a password
# it keeps in DATA_DIR/secrets/zoneagent.env.
set -euo pipefail

PORT="${ZONE_POSTGRES_PORT:-5433}"
NAME=zone

if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "installing pgbouncer"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y pgbouncer >/dev/null 2>&1 || {
      apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y pgbouncer >/dev/null
    } || echo "could not install pgbouncer: managed databases will be unavailable" >&2
  fi
fi
# The package starts its own pgbouncer on 6432 as a system service; the zone agent runs the
# zone's pooler itself, on that port, so the packaged one is stopped and kept from starting.
if [ -f /etc/init.d/pgbouncer ] && pgrep -u postgres -x pgbouncer >/dev/null 2>&1; then
  /etc/init.d/pgbouncer stop >/dev/null 2>&1 || true
fi
if [ -f /etc/default/pgbouncer ] && ! grep -q '^START=0' /etc/default/pgbouncer; then
  echo 'START=0' >>/etc/default/pgbouncer
fi

command -v pg_lsclusters >/dev/null 2>&1 || { echo "no Debian postgresql-common: no zone cluster" >&2; exit 1; }
# The version of the running 5432 cluster (the newest installed when none runs).
VERSION=$(pg_lsclusters -h | awk '$3 == 5432 {print $1; exit}')
[ -n "$VERSION" ] || VERSION=$(ls /etc/postgresql | sort -V | tail -1)
CONF=/etc/postgresql/$VERSION/$NAME

if [ ! -d "$CONF" ]; then
  echo "creating the zone's Postgres cluster ($VERSION/$NAME on port $PORT)"
  pg_createcluster "$VERSION" "$NAME" -p "$PORT" >/dev/null
  cat >"$CONF/pg_hba.conf" <<'HBA'
# The zone's managed-database cluster (scripts/zone-postgres.sh). Every TCP connection needs
# a password; the Unix socket admits postgres (and root as postgres) by peer, for the
# bootstrap, and each other role by peer only as itself.
local   all   postgres                  peer map=zone
local   all   all                       peer
host    all   all        127.0.0.1/32   scram-sha-256
host    all   all        ::1/128        scram-sha-256
HBA
  cat >>"$CONF/pg_ident.conf" <<'IDENT'
zone   postgres   postgres
zone   root       postgres
IDENT
  cat >"$CONF/conf.d/zone.conf" <<'PGCONF'
listen_addresses = '127.0.0.1'
password_encryption = 'scram-sha-256'
PGCONF
fi

if ! pg_lsclusters -h | awk -v v="$VERSION" -v n="$NAME" '$1 == v && $2 == n {print $4}' | grep -q online; then
  echo "starting the zone's Postgres cluster"
  pg_ctlcluster --skip-systemctl-redirect "$VERSION" "$NAME" start
fi
ready=
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$PORT" && { ready=1; break; }
  sleep 1
done
if [ -z "$ready" ]; then
  echo "the zone's Postgres does not answer on 127.0.0.1:$PORT" >&2
  exit 1
fi

# What a database's own role may not change (superuser settings), applied online: a reload,
# never a restart. temp_file_limit bounds the temporary files one session may hold (sorts,
# hashes spilling to disk); each database's files, temporary ones included, also sit on a
# filesystem of their own the zone agent sizes from the cap (services/zoneagent/README.md).
TEMP_FILE_LIMIT="${ZONE_POSTGRES_TEMP_FILE_LIMIT:-1GB}"
# psql substitutes :'v' (a quoted literal) only in what it reads, not in -c.
zone_psql() { psql -X -q -At -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$PORT" -U postgres -d postgres -v v="$TEMP_FILE_LIMIT"; }
current=$(echo "SELECT setting::bigint = pg_size_bytes(:'v') / 1024 FROM pg_settings WHERE name = 'temp_file_limit';" | zone_psql)
if [ "$current" != t ]; then
  printf '%s\n' "ALTER SYSTEM SET temp_file_limit = :'v';" "SELECT pg_reload_conf();" | zone_psql >/dev/null
  echo "zone Postgres: temp_file_limit = $TEMP_FILE_LIMIT"
fi
