#!/usr/bin/env bash
# Makes sure the local Postgres and RabbitMQ are up, starting them if not, and waits until
# both answer.
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
rabbit_up() { rabbitmq-diagnostics -q check_port_connectivity >/dev/null 2>&1; }

if ! pg_up; then
  echo "starting Postgres"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
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
for i in $(seq 1 120); do
  if pg_up && rabbit_up; then
    exit 0
  fi
  sleep 1
done
pg_up || echo "Postgres does not answer on 127.0.0.1:5432" >&2
rabbit_up || echo "RabbitMQ does not answer on 127.0.0.1:5672" >&2
exit 1
