#!/bin/bash
# Entrypoint of the RabbitMQ stand-in (payments-local/rabbitmq, Debian's rabbitmq-server), honouring what
# docker-compose.yml gives the official rabbitmq:*-management image: RABBITMQ_DEFAULT_USER / RABBITMQ_DEFAULT_PASS
# (the account created on the first boot of an empty node), /etc/rabbitmq/rabbitmq.conf when mounted, and
# RABBITMQ_DEFINITIONS_FILE when set (definitions imported at boot), with the management plugin on; and, for the
# nodes of a cluster (infra/compose/ha.yml), RABBITMQ_ERLANG_COOKIE: the secret every node of the cluster shares.
set -euo pipefail
if [ "${1:-rabbitmq-server}" != rabbitmq-server ]; then exec "$@"; fi

data=/var/lib/rabbitmq
mkdir -p "$data" /var/log/rabbitmq
chown -R rabbitmq:rabbitmq "$data" /var/log/rabbitmq

# The mounted file is read-only: the effective configuration is it plus what the environment asks for.
config=$data/effective.conf
{
  [ -f /etc/rabbitmq/rabbitmq.conf ] && cat /etc/rabbitmq/rabbitmq.conf
  echo
  [ -n "${RABBITMQ_DEFAULT_USER:-}" ] && echo "default_user = $RABBITMQ_DEFAULT_USER"
  [ -n "${RABBITMQ_DEFAULT_PASS:-}" ] && echo "default_pass = $RABBITMQ_DEFAULT_PASS"
  [ -n "${RABBITMQ_DEFINITIONS_FILE:-}" ] && echo "load_definitions = $RABBITMQ_DEFINITIONS_FILE"
  # Logs to the container's output, as the official image does.
  echo "log.console = true"
  echo "log.file = false"
} >"$config"
echo '[rabbitmq_management,rabbitmq_prometheus].' >"$data/enabled_plugins"
chown rabbitmq:rabbitmq "$config" "$data/enabled_plugins"
chmod 0600 "$config"

# One Erlang cookie for the node and for root's CLI tools (the healthcheck runs rabbitmq-diagnostics as root): the
# cluster's when given, else one of its own.
if [ -n "${RABBITMQ_ERLANG_COOKIE:-}" ]; then
  rm -f "$data/.erlang.cookie"
  printf '%s' "$RABBITMQ_ERLANG_COOKIE" >"$data/.erlang.cookie"
elif [ ! -s "$data/.erlang.cookie" ]; then
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$data/.erlang.cookie"
fi
chown rabbitmq:rabbitmq "$data/.erlang.cookie"
chmod 0400 "$data/.erlang.cookie"
install -m 0400 "$data/.erlang.cookie" /root/.erlang.cookie

export RABBITMQ_CONFIG_FILE=$config RABBITMQ_ENABLED_PLUGINS_FILE=$data/enabled_plugins HOME=$data
unset RABBITMQ_DEFAULT_USER RABBITMQ_DEFAULT_PASS RABBITMQ_ERLANG_COOKIE
exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups rabbitmq-server
