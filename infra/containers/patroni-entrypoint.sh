#!/bin/bash
# Entrypoint of a Patroni node in the `ha` profile (infra/compose/ha.yml; payments-local/postgres-ha, Debian's
# patroni and postgresql-15): writes Patroni's configuration from the environment and runs Patroni as the postgres
# user. Patroni, not this script, decides who the primary is: the first node to take the leader key in etcd
# initialises the cluster, the others clone it (pg_basebackup) and stream from it as standbys.
#
# Environment: PATRONI_NAME (this node, also the host name the others reach it by), PATRONI_SCOPE (the cluster),
# PATRONI_ETCD3_HOSTS (host:port,…), POSTGRES_PASSWORD (the superuser's), POSTGRES_REPLICATION_PASSWORD (the
# replicator's); PATRONI_TTL / PATRONI_LOOP_WAIT / PATRONI_RETRY_TIMEOUT (15 / 2 / 5: a lost primary is replaced
# within about the TTL; Patroni needs loop_wait + 2 × retry_timeout ≤ ttl). synchronous_mode is on and
# synchronous_mode_strict off: while the standby is away the primary goes on committing alone (docs/adr/0114).
set -euo pipefail
: "${PATRONI_NAME:?PATRONI_NAME is required}"
: "${PATRONI_ETCD3_HOSTS:?PATRONI_ETCD3_HOSTS is required}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
: "${POSTGRES_REPLICATION_PASSWORD:?POSTGRES_REPLICATION_PASSWORD is required}"
scope=${PATRONI_SCOPE:-payments}
data=/var/lib/postgresql/data
config=/var/run/postgresql/patroni.yml

mkdir -p "$data" /var/run/postgresql
chown postgres:postgres "$data" /var/run/postgresql
chmod 0700 "$data"
# Patroni reads its settings from this file only: the passwords stay out of its environment and of `ps`.
umask 077
cat >"$config" <<YAML
scope: $scope
name: $PATRONI_NAME
restapi:
  listen: 0.0.0.0:8008
  connect_address: $PATRONI_NAME:8008
etcd3:
  hosts: $PATRONI_ETCD3_HOSTS
bootstrap:
  dcs:
    ttl: ${PATRONI_TTL:-15}
    loop_wait: ${PATRONI_LOOP_WAIT:-2}
    retry_timeout: ${PATRONI_RETRY_TIMEOUT:-5}
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        max_connections: 300
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: 'on'
        password_encryption: scram-sha-256
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
    - local all all trust
    - host replication replicator all scram-sha-256
    - host all all all scram-sha-256
postgresql:
  listen: 0.0.0.0:5432
  connect_address: $PATRONI_NAME:5432
  data_dir: $data/pgdata
  bin_dir: /usr/lib/postgresql/15/bin
  pgpass: /var/run/postgresql/pgpass
  authentication:
    superuser:
      username: postgres
      password: '$POSTGRES_PASSWORD'
    replication:
      username: replicator
      password: '$POSTGRES_REPLICATION_PASSWORD'
  parameters:
    unix_socket_directories: /var/run/postgresql
YAML
chown postgres:postgres "$config"
unset POSTGRES_PASSWORD POSTGRES_REPLICATION_PASSWORD
exec setpriv --reuid=postgres --regid=postgres --init-groups env HOME=/var/lib/postgresql patroni "$config"
