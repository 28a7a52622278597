#!/bin/sh
# Entrypoint of the offline RabbitMQ stand-in (payments-local/rabbitmq): the part of the official image's contract
# that the tests and compose use. RABBITMQ_DEFAULT_USER / RABBITMQ_DEFAULT_PASS (guest/guest) name the first
# user, who may log in from anywhere; the management plugin is on (port 15672); the log goes to stdout.
set -eu

if [ "${1:-rabbitmq-server}" != rabbitmq-server ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  user=${RABBITMQ_DEFAULT_USER:-guest}
  pass=${RABBITMQ_DEFAULT_PASS:-guest}
  {
    echo 'loopback_users = none'
    echo 'listeners.tcp.default = 5672'
    echo 'management.tcp.port = 15672'
    echo 'log.console = true'
    echo 'log.console.level = info'
    echo 'log.file = false'
    echo "default_user = $user"
    echo "default_pass = $pass"
  } >/etc/rabbitmq/rabbitmq.conf
  chown rabbitmq:rabbitmq /etc/rabbitmq/rabbitmq.conf
  chmod 600 /etc/rabbitmq/rabbitmq.conf
  mkdir -p /var/lib/rabbitmq /var/log/rabbitmq
  chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
  exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups env HOME=/var/lib/rabbitmq "$0" "$@"
fi

cd /var/lib/rabbitmq
exec /usr/lib/rabbitmq/bin/rabbitmq-server
