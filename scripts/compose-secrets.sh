#!/usr/bin/env bash
# Makes every credential docker-compose.yml hands out, as one file per holder under
# deployments/compose/secrets/ (folder 0700, files 0600, ignored by git and by docker build).
# Running it again keeps every value, so a restart locks nobody out; delete a file to make a
# new one (and recreate what holds it). Nothing here is ever committed.
#
#   postgres.env, zone-postgres.env  the two clusters' superuser passwords (each server only)
#   objectstore.env                  the S3 server's root key (the objectstore service only)
#   bootstrap.env                    their admin URLs and the S3 root key as
#                                    OBJECT_STORE_ADMIN_*: the bootstrap service alone reads them
#   <name>.env                       a workload's own <NAME>_DATABASE_URL and <NAME>_AMQP_URL
#                                    (zoneagent.env also ZONE_POSTGRES_ADMIN_URL), and for deploys
#                                    and the zone OBJECT_STORE_URL and their own account's
#                                    <NAME>_OBJECT_STORE_ACCESS_KEY, _SECRET_KEY, _BUCKET, made by
#                                    `bootstrap -offline` exactly as make run's bootstrap does
#   rabbitmq-definitions.json        the broker users (salted hashes) the broker loads at boot
#   signing.env                      GATEWAY_SIGNING_KEY: the gateway and the services
#   redis.env, gateway-redis.env     Redis's password, and the gateways' REDIS_URL
#   vault.env                        VAULT_ADDR and VAULT_TOKEN for apps (and the one-shot
#                                    vault-transit): the VAULT_ADDR given, or compose's dev Vault
#   vault-server.env                 the dev Vault's root token (the vault service only)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/secrets-lib.sh
umask 077
dir=$(secrets_dir "${TORI_SECRETS_DIR:-deployments/compose/secrets}")

pg=$(kept POSTGRES_PASSWORD "$dir/postgres.env")
zone_pg=$(kept POSTGRES_PASSWORD "$dir/zone-postgres.env")
redis=$(kept REDIS_PASSWORD "$dir/redis.env")
# The object store's root: the server starts with it, and the bootstrap uses it to make
# deploys' and the zone's accounts (role user) and buckets; no workload holds it.
s3_root=tori-root
s3_root_secret=$(kept ROOT_SECRET_KEY "$dir/objectstore.env")
put "$dir/postgres.env" "POSTGRES_PASSWORD=$pg"
put "$dir/zone-postgres.env" "POSTGRES_PASSWORD=$zone_pg"
put "$dir/objectstore.env" "ROOT_ACCESS_KEY=$s3_root" "ROOT_SECRET_KEY=$s3_root_secret"
put "$dir/bootstrap.env" \
  "DATABASE_URL=postgres://postgres:$pg@postgres:5432/tori?sslmode=disable" \
  "ZONE_POSTGRES_SUPERUSER_URL=postgres://postgres:$zone_pg@zone-postgres:5432/postgres?sslmode=disable" \
  "OBJECT_STORE_ADMIN_ACCESS_KEY=$s3_root" \
  "OBJECT_STORE_ADMIN_SECRET_KEY=$s3_root_secret"
put "$dir/redis.env" "REDIS_PASSWORD=$redis"
put "$dir/gateway-redis.env" "REDIS_URL=redis://:$redis@redis:6379/0"
put "$dir/signing.env" "GATEWAY_SIGNING_KEY=$(kept GATEWAY_SIGNING_KEY "$dir/signing.env")"
if [ -n "${VAULT_ADDR:-}" ]; then
  put "$dir/vault.env" "VAULT_ADDR=$VAULT_ADDR" "VAULT_TOKEN=${VAULT_TOKEN:?VAULT_ADDR is set but VAULT_TOKEN is not}"
  vault_root=$(kept VAULT_DEV_ROOT_TOKEN_ID "$dir/vault-server.env")
else
  # compose's own dev Vault: its root token, which apps and the one-shot vault-transit use.
  vault_root=$(kept VAULT_DEV_ROOT_TOKEN_ID "$dir/vault-server.env")
  put "$dir/vault.env" "VAULT_ADDR=http://vault:8200" "VAULT_TOKEN=$vault_root"
fi
put "$dir/vault-server.env" "VAULT_DEV_ROOT_TOKEN_ID=$vault_root"

# Every workload's own credentials: the URLs name the compose hosts and hold no admin
# password (the bootstrap service makes the roles, and the object-store accounts, with these
# passwords and secrets at `up`). OBJECT_STORE_URL is the store inside compose's network.
offline_bootstrap "$dir" \
  DATABASE_URL='postgres://postgres@postgres:5432/tori?sslmode=disable' \
  AMQP_URL='amqp://rabbitmq:5672/' \
  ZONE_ID=local \
  ZONE_POSTGRES_ADDR=zone-postgres:5432 \
  OBJECT_STORE_URL=http://objectstore:7070
echo "compose credentials are in $dir" >&2
