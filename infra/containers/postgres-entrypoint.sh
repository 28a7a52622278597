#!/bin/bash
# Entrypoint of the PostgreSQL stand-in (payments-local/postgres, Debian's postgresql-15), honouring what
# docker-compose.yml gives the official image: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, PGDATA, and the
# *.sql / *.sh files in /docker-entrypoint-initdb.d, run once when the data directory is empty. Clients from the
# network sign in with a password (scram-sha-256); the socket inside the container trusts, as the official image's.
set -euo pipefail
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
export PGDATA

if [ "${1:-postgres}" != postgres ]; then exec "$@"; fi

as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # Initialise on the socket only, then run the init scripts as the superuser.
  as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
  fi
  for file in /docker-entrypoint-initdb.d/*; do
    [ -e "$file" ] || continue
    case "$file" in
      *.sql) echo "running $file"; as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$file" >/dev/null ;;
      *.sh) echo "running $file"; . "$file" ;;
      *) echo "ignoring $file" ;;
    esac
  done
  as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "PostgreSQL initialised in $PGDATA"
fi

shift || true
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' "$@"
