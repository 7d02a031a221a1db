#!/usr/bin/env bash
# Makes the credential files deployments/k8s/kustomization.yaml turns into one Secret per
# holder, under deployments/k8s/secrets/ (folder 0700, files 0600, ignored by git and by
# docker build). Running it again keeps every value; delete a file to make a new one.
#
#   DATABASE_URL (required)  the control plane's Postgres as an admin, as the cluster reaches it:
#                            only the bootstrap Job gets it (Secret tori-bootstrap)
#   AMQP_URL                 the broker as the services reach it (amqp://rabbitmq:5672/); no
#                            user is needed: load secrets/rabbitmq-definitions.json into it
#   ZONE_ID, ZONE_POSTGRES_ADDR  the zone whose credentials are made too (zoneagent.env, for
#                            the zone's own machines) and its managed-database cluster
#   VAULT_ADDR, VAULT_TOKEN  Vault transit for apps alone (Secret tori-vault)
#   OBJECT_STORE_URL (required)  your S3-compatible store as deploys and the zone reach it:
#                            written to deploys.env and zoneagent.env with each one's own
#                            account and bucket (docs/objectstore.md)
#   OBJECT_STORE_ADMIN_ACCESS_KEY, OBJECT_STORE_ADMIN_SECRET_KEY  an admin of that store, if it
#                            is a Versity S3 gateway: the bootstrap Job alone gets them (Secret
#                            tori-bootstrap) and makes those accounts and buckets
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/secrets-lib.sh
umask 077
: "${DATABASE_URL:?set DATABASE_URL to the control plane Postgres admin URL, as the cluster reaches it}"
: "${OBJECT_STORE_URL:?set OBJECT_STORE_URL to the S3-compatible store as the cluster reaches it (deploys keeps every artifact there)}"
dir=$(secrets_dir "${TORI_SECRETS_DIR:-deployments/k8s/secrets}")

if [ -n "${OBJECT_STORE_ADMIN_ACCESS_KEY:-}" ]; then
  put "$dir/bootstrap.env" "DATABASE_URL=$DATABASE_URL" \
    "OBJECT_STORE_ADMIN_ACCESS_KEY=$OBJECT_STORE_ADMIN_ACCESS_KEY" \
    "OBJECT_STORE_ADMIN_SECRET_KEY=${OBJECT_STORE_ADMIN_SECRET_KEY:?OBJECT_STORE_ADMIN_ACCESS_KEY is set but OBJECT_STORE_ADMIN_SECRET_KEY is not}"
else
  put "$dir/bootstrap.env" "DATABASE_URL=$DATABASE_URL"
fi
redis=$(kept REDIS_PASSWORD "$dir/redis.env")
put "$dir/redis.env" "REDIS_PASSWORD=$redis"
put "$dir/gateway-redis.env" "REDIS_URL=redis://:$redis@redis:6379/0"
put "$dir/signing.env" "GATEWAY_SIGNING_KEY=$(kept GATEWAY_SIGNING_KEY "$dir/signing.env")"
if [ -n "${VAULT_ADDR:-}" ]; then
  put "$dir/vault.env" "VAULT_ADDR=$VAULT_ADDR" "VAULT_TOKEN=${VAULT_TOKEN:?VAULT_ADDR is set but VAULT_TOKEN is not}"
elif [ ! -f "$dir/vault.env" ]; then
  echo "k8s-secrets.sh: VAULT_ADDR is not set: apps keeps its keyring on an emptyDir and loses it with the pod (see deployments/k8s/README.md)" >&2
  put "$dir/vault.env"
fi

# Every workload's own credentials, from the admin URL's host and database, reaching nothing.
offline_bootstrap "$dir" \
  DATABASE_URL="$DATABASE_URL" \
  AMQP_URL="${AMQP_URL:-amqp://rabbitmq:5672/}" \
  ZONE_ID="${ZONE_ID:-local}" \
  ZONE_POSTGRES_ADDR="${ZONE_POSTGRES_ADDR:-127.0.0.1:5433}" \
  OBJECT_STORE_URL="$OBJECT_STORE_URL"
unquote "$dir"
echo "Kubernetes credentials are in $dir; kustomize build deployments/k8s makes the Secrets" >&2
