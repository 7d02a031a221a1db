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
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$PORT" && exit 0
  sleep 1
done
echo "the zone's Postgres does not answer on 127.0.0.1:$PORT" >&2
exit 1
