#!/usr/bin/env bash
# The zone's own Postgres for managed databases (decisions.md, "Managed database"): a second
# local cluster, "zone" on port 5433, of the same major version as the control plane's
# (5432), and Debian's PgBouncer for the zone agent to run in front of it. Made once; run
# again it only starts what has stopped. The control plane's cluster is never touched.
#
# Authentication in the zone cluster (docs/tenants-managed-databases.md): one login reaches
# one database. Over the Unix socket the OS user postgres, and root (who runs bin/bootstrap,
# the zone agent and the tests here), may log in as postgres by peer. Between two marker
# lines, pg_hba.conf names each managed database with its two logins (password, over TCP for
# the pooler and over the socket for the zone's dumps) and each provisioning role with the
# maintenance database; the zone agents regenerate that section from the catalog
# (pkg/pgstore/zonehba.go); every other TCP connection is refused. bin/bootstrap then makes
# the zone's provisioning role (LOGIN CREATEDB CREATEROLE, not a superuser) with a password
# it keeps in DATA_DIR/secrets/zoneagent.env. Run on a cluster made before the section, this
# script moves its pg_hba.conf to the new layout (a reload, never a restart).
set -euo pipefail

PORT="${ZONE_POSTGRES_PORT:-5433}"
# Another name (and port) makes a private cluster of the same kind, for work that must not
# touch the shared one.
NAME="${ZONE_POSTGRES_NAME:-zone}"

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

# pg_hba.conf in the zone's layout: the head, the section the zone agents keep (filled here
# from the catalog, as pkg/pgstore/zonehba.go fills it: the same lines), and the tail that
# refuses every other TCP connection. A file already in this layout is left to the agents.
HBA_BEGIN="# BEGIN tori zone: one line per database naming its two logins; regenerated from the catalog, edits here are lost"
HBA_END="# END tori zone"
hba_section() {
  psql -X -q -At -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$PORT" -U postgres -d postgres <<'SQL'
SELECT line FROM (
  SELECT 1 AS part, rolname COLLATE "C" AS name, n, format('host postgres "%s" %s scram-sha-256', rolname, addr) AS line
  FROM pg_roles, unnest(ARRAY['127.0.0.1/32', '::1/128']) WITH ORDINALITY AS a(addr, n)
  WHERE rolcanlogin AND rolcreaterole AND NOT rolsuper AND rolname ~ '^[a-z_][a-z0-9_]{0,62}$' AND rolname !~ '^db_'
  UNION ALL
  SELECT 2, datname COLLATE "C", 0, format('local "%1$s" "%1$s","%1$s_b" scram-sha-256', datname)
  FROM pg_database WHERE datname ~ '^db_[0-9a-f]{32}$'
  UNION ALL
  SELECT 2, datname COLLATE "C", n, format('host "%1$s" "%1$s","%1$s_b" %2$s scram-sha-256', datname, addr)
  FROM pg_database, unnest(ARRAY['127.0.0.1/32', '::1/128']) WITH ORDINALITY AS a(addr, n)
  WHERE datname ~ '^db_[0-9a-f]{32}$'
) lines ORDER BY part, name, n;
SQL
}
# write_hba SECTION replaces pg_hba.conf (owner and mode kept) in one rename.
HBA_FILE="$CONF/pg_hba.conf"
write_hba() {
  local tmp
  tmp=$(mktemp "$CONF/.pg_hba.conf.XXXXXX")
  {
    cat <<'HBA'
# The zone's managed-database cluster (scripts/zone-postgres.sh). The Unix socket admits
# postgres (and root as postgres) by peer; each managed database admits its own two logins,
# with their password, and the provisioning roles the maintenance database, by the section
# below; every other TCP connection is refused.
local   all   postgres                  peer map=zone
HBA
    echo "$HBA_BEGIN"
    [ -z "$1" ] || printf '%s\n' "$1"
    echo "$HBA_END"
    cat <<'HBA'
local   all   all                       peer
host    all   all        127.0.0.1/32   reject
host    all   all        ::1/128        reject
HBA
  } >"$tmp"
  chown --reference="$HBA_FILE" "$tmp" && chmod --reference="$HBA_FILE" "$tmp"
  mv "$tmp" "$HBA_FILE"
}

cluster_exists() { pg_lsclusters -h | awk -v v="$VERSION" -v n="$NAME" '$1 == v && $2 == n {found = 1} END {exit !found}'; }
# A dropped cluster can leave its config folder behind (a lock file the agents took in it):
# that folder is not a cluster, and is moved aside rather than taken for one.
if ! cluster_exists && [ -d "$CONF" ]; then
  stale="/var/tmp/postgresql-$VERSION-$NAME.orphan-$(date +%Y%m%d%H%M%S)"
  echo "the zone's Postgres config folder $CONF has no cluster: moved to $stale"
  mv "$CONF" "$stale"
fi
if ! cluster_exists; then
  echo "creating the zone's Postgres cluster ($VERSION/$NAME on port $PORT)"
  pg_createcluster "$VERSION" "$NAME" -p "$PORT" >/dev/null
  # No database and no provisioning role yet: an empty section.
  write_hba ""
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

if ! grep -qxF "$HBA_BEGIN" "$HBA_FILE"; then
  echo "zone Postgres: pg_hba.conf to one login per database"
  exec 9>"$HBA_FILE.lock"
  flock 9
  section=$(hba_section)
  cp -p "$HBA_FILE" "$HBA_FILE.before-zone-section"
  write_hba "$section"
  echo "SELECT pg_reload_conf();" | psql -X -q -At -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$PORT" -U postgres -d postgres >/dev/null
  exec 9>&-
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
