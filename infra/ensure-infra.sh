#!/usr/bin/env bash
# Make sure the local PostgreSQL and RabbitMQ that the services use are running on 127.0.0.1.
#
#   infra/ensure-infra.sh          # exit 0: both answer; exit 1: something is missing or would not start
#
# - Already answering      -> say so, change nothing.
# - Installed but stopped  -> start it (Postgres via pg_ctlcluster, RabbitMQ via rabbitmq-server -detached) and wait.
# - Not installed          -> print the apt-get command to install it and exit 1.
# Also makes sure the Postgres superuser role (postgres, trust auth over TCP) exists: `pnpm start` and the tests
# provision with it (a role per service owning its database; the tests also a RabbitMQ user per service, through
# the management API or, as root, rabbitmqctl).
# A RabbitMQ started here listens on 127.0.0.1 only (listener + epmd); an existing rabbitmq.conf is only changed
# when it has no 127.0.0.1:5672 listener (a backup is kept next to it).
# Idempotent: safe to run any number of times. Starting services needs root (or the postgres / rabbitmq user).
#
# Environment (optional): PG_PORT (5432), PG_USER (postgres), AMQP_PORT (5672), INFRA_WAIT_SECONDS (60).

set -uo pipefail

HOST=127.0.0.1
PG_PORT="${PG_PORT:-5432}"
PG_USER="${PG_USER:-postgres}"
AMQP_PORT="${AMQP_PORT:-5672}"
WAIT_SECONDS="${INFRA_WAIT_SECONDS:-60}"
RABBITMQ_CONF="${RABBITMQ_CONFIG_FILE:-/etc/rabbitmq/rabbitmq.conf}"
[[ "$RABBITMQ_CONF" == *.conf ]] || RABBITMQ_CONF="$RABBITMQ_CONF.conf"
RABBITMQ_ENV_CONF="${RABBITMQ_CONF_ENV_FILE:-/etc/rabbitmq/rabbitmq-env.conf}"

info() { printf '[infra] %s\n' "$*"; }
warn() { printf '[infra] WARNING: %s\n' "$*" >&2; }
err() { printf '[infra] ERROR: %s\n' "$*" >&2; }

# True when something accepts TCP connections on $HOST:$1.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null
}

pg_up() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h "$HOST" -p "$PG_PORT" -t 2
  else
    port_open "$PG_PORT"
  fi
}

rabbit_up() { port_open "$AMQP_PORT"; }

# wait_for <seconds> <command...>: poll once a second until the command succeeds.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS >= deadline)) && return 1
    sleep 1
  done
}

missing_packages=()
failed=0

# ----------------------------------------------------------------------------------------------------------------
# PostgreSQL
# ----------------------------------------------------------------------------------------------------------------

# Prints "<version> <cluster>" of the local cluster configured for $PG_PORT (Debian/Ubuntu postgresql-common).
pg_cluster() {
  local found=""
  if command -v pg_lsclusters >/dev/null 2>&1; then
    found=$(pg_lsclusters --no-header 2>/dev/null | awk -v p="$PG_PORT" '$3 == p { print $1, $2; exit }')
  fi
  if [[ -z "$found" && -d /etc/postgresql ]]; then
    local ver
    ver=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$ver" && -d "/etc/postgresql/$ver/main" ]] && found="$ver main"
  fi
  printf '%s' "$found"
}

start_postgres() {
  local cluster ver name
  cluster=$(pg_cluster)
  if [[ -z "$cluster" ]]; then
    err "PostgreSQL is installed but no cluster is configured for port $PG_PORT (see pg_lsclusters)."
    err "Create one with: pg_createcluster --start --port $PG_PORT <version> main"
    return 1
  fi
  read -r ver name <<<"$cluster"
  info "PostgreSQL $ver/$name is not answering on $HOST:$PG_PORT; starting it ..."
  if ! pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start; then
    # "already running" (e.g. listening elsewhere) also lands here; the wait below decides.
    warn "pg_ctlcluster $ver $name start returned an error (log: /var/log/postgresql/postgresql-$ver-$name.log)"
  fi
  if ! wait_for "$WAIT_SECONDS" pg_up; then
    err "PostgreSQL did not answer on $HOST:$PG_PORT within ${WAIT_SECONDS}s."
    err "Check /var/log/postgresql/postgresql-$ver-$name.log and listen_addresses/port in /etc/postgresql/$ver/$name/postgresql.conf"
    return 1
  fi
  info "PostgreSQL started on $HOST:$PG_PORT."
}

# The launcher and the tests connect as postgres://$PG_USER@127.0.0.1:$PG_PORT/postgres with trust auth.
ensure_pg_role() {
  command -v psql >/dev/null 2>&1 || {
    warn "psql not found; cannot verify the '$PG_USER' role (install postgresql-client)."
    return 0
  }
  local out
  if out=$(PGCONNECT_TIMEOUT=5 psql -X -w -h "$HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -Atc 'select 1' 2>&1); then
    return 0
  fi
  if [[ "$out" == *"role \"$PG_USER\" does not exist"* ]]; then
    info "Creating PostgreSQL role '$PG_USER' ..."
    local sql="CREATE ROLE \"$PG_USER\" WITH LOGIN SUPERUSER"
    # Over the local Unix socket as the OS user postgres (peer/trust auth on Debian/Ubuntu).
    if { [[ $EUID -eq 0 ]] && runuser -u postgres -- psql -X -q -p "$PG_PORT" -d postgres -c "$sql"; } ||
      { [[ $(id -un) == postgres ]] && psql -X -q -p "$PG_PORT" -d postgres -c "$sql"; }; then
      info "Role '$PG_USER' created."
      return 0
    fi
    err "Could not create role '$PG_USER'. As a superuser run: $sql;"
    return 1
  fi
  if [[ "$out" == *"password authentication failed"* || "$out" == *"no password supplied"* ||
    "$out" == *"no pg_hba.conf entry"* ]]; then
    local hba
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf 2>/dev/null | sort -V | tail -n 1)
    err "PostgreSQL refuses '$PG_USER' over TCP without a password: $out"
    err "The services expect trust auth for local development. Add this line before other 'host' lines in"
    err "  ${hba:-pg_hba.conf}:   host all all 127.0.0.1/32 trust"
    err "then reload: pg_ctlcluster --skip-systemctl-redirect <version> main reload"
    err "(or set DATABASE_URL with credentials for your server)."
    return 1
  fi
  err "Cannot connect to PostgreSQL as '$PG_USER': $out"
  return 1
}

if pg_up; then
  info "PostgreSQL is up on $HOST:$PG_PORT."
  ensure_pg_role || failed=1
elif command -v pg_ctlcluster >/dev/null 2>&1 && [[ -d /etc/postgresql ]]; then
  if start_postgres; then
    ensure_pg_role || failed=1
  else
    failed=1
  fi
else
  err "PostgreSQL is not answering on $HOST:$PG_PORT and is not installed here."
  missing_packages+=(postgresql)
fi

# ----------------------------------------------------------------------------------------------------------------
# RabbitMQ
# ----------------------------------------------------------------------------------------------------------------

LOOPBACK_LISTENER_RE="^[[:space:]]*listeners\.tcp\.[^=[:space:]]+[[:space:]]*=[[:space:]]*127\.0\.0\.1:$AMQP_PORT[[:space:]]*$"

# A broker started by this script must listen on 127.0.0.1 only. Only touch files that lack that.
ensure_rabbit_loopback_config() {
  local dir
  dir=$(dirname "$RABBITMQ_CONF")
  mkdir -p "$dir" 2>/dev/null || true
  if [[ ! -f "$RABBITMQ_CONF" ]]; then
    info "Writing $RABBITMQ_CONF (AMQP listener on 127.0.0.1:$AMQP_PORT only)."
    printf '# Written by infra/ensure-infra.sh: local development broker, loopback only.\nlisteners.tcp.1 = 127.0.0.1:%s\n' \
      "$AMQP_PORT" >"$RABBITMQ_CONF" || return 1
  elif ! grep -Eq "$LOOPBACK_LISTENER_RE" "$RABBITMQ_CONF"; then
    local backup
    backup="$RABBITMQ_CONF.bak.$(date +%Y%m%d%H%M%S)"
    cp -p "$RABBITMQ_CONF" "$backup" || return 1
    info "$RABBITMQ_CONF has no 127.0.0.1:$AMQP_PORT listener; adding one (backup: $backup)."
    # Other TCP listeners (e.g. 'listeners.tcp.default = 5672' = all interfaces) are commented out.
    sed -i -E 's/^([[:space:]]*listeners\.tcp\.)/# disabled by ensure-infra.sh: \1/' "$RABBITMQ_CONF" || return 1
    printf '\n# Added by infra/ensure-infra.sh: local development broker, loopback only.\nlisteners.tcp.1 = 127.0.0.1:%s\n' \
      "$AMQP_PORT" >>"$RABBITMQ_CONF" || return 1
  fi
  if ! grep -Eq '^[[:space:]]*(export[[:space:]]+)?ERL_EPMD_ADDRESS=' "$RABBITMQ_ENV_CONF" 2>/dev/null; then
    info "Adding ERL_EPMD_ADDRESS=127.0.0.1 to $RABBITMQ_ENV_CONF."
    printf 'ERL_EPMD_ADDRESS=127.0.0.1\n' >>"$RABBITMQ_ENV_CONF" || return 1
    # With epmd on 127.0.0.1 the CLI tools must reach the node as rabbit@localhost (the host name may resolve to
    # 127.0.1.1 or a LAN address). Only set that on a fresh install: a different node name means a different
    # data directory.
    local mnesia="${RABBITMQ_MNESIA_BASE:-/var/lib/rabbitmq/mnesia}"
    if [[ -z "${RABBITMQ_NODENAME:-}" ]] && ! grep -Eq '^[[:space:]]*(export[[:space:]]+)?NODENAME=' "$RABBITMQ_ENV_CONF" &&
      ! compgen -G "$mnesia/rabbit@*" >/dev/null; then
      printf 'NODENAME=rabbit@localhost\n' >>"$RABBITMQ_ENV_CONF" || return 1
    fi
    # Erlang distribution (CLI tools <-> node) on loopback too, unless ERL_FLAGS is already customised.
    if ! grep -Eq 'ERL_FLAGS|inet_dist_use_interface' "$RABBITMQ_ENV_CONF"; then
      printf 'export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"\n' >>"$RABBITMQ_ENV_CONF" || return 1
    fi
  fi
  [[ -f "$RABBITMQ_CONF" ]] && chmod a+r "$RABBITMQ_CONF" "$RABBITMQ_ENV_CONF" 2>/dev/null
  return 0
}

rabbit_ready() {
  rabbit_up || return 1
  # The port opens slightly before the broker has finished booting; await_startup confirms (if the CLI can reach it).
  if command -v rabbitmqctl >/dev/null 2>&1; then
    rabbitmqctl -q await_startup --timeout 5 >/dev/null 2>&1 || rabbitmqctl -q status >/dev/null 2>&1 || true
  fi
  return 0
}

start_rabbitmq() {
  if ! ensure_rabbit_loopback_config; then
    err "Could not write the RabbitMQ loopback configuration ($RABBITMQ_CONF / $RABBITMQ_ENV_CONF); run as root."
    return 1
  fi
  info "RabbitMQ is not answering on $HOST:$AMQP_PORT; starting it (rabbitmq-server -detached) ..."
  # The epmd it spawns also binds to loopback only.
  export ERL_EPMD_ADDRESS=127.0.0.1
  if ! rabbitmq-server -detached >/dev/null 2>&1; then
    warn "rabbitmq-server -detached returned an error; waiting anyway."
  fi
  # await_startup fails outright until the node has registered with epmd, hence the retry loop.
  local deadline=$((SECONDS + WAIT_SECONDS))
  until rabbit_up; do
    if ((SECONDS >= deadline)); then
      err "RabbitMQ did not answer on $HOST:$AMQP_PORT within ${WAIT_SECONDS}s."
      err "Check /var/log/rabbitmq/ (startup_err, rabbit@*.log) and $RABBITMQ_CONF."
      return 1
    fi
    rabbitmqctl -q await_startup --timeout 5 >/dev/null 2>&1 || sleep 1
  done
  rabbit_ready
  info "RabbitMQ started on $HOST:$AMQP_PORT."
}

warn_if_rabbit_exposed() {
  command -v ss >/dev/null 2>&1 || return 0
  if ss -Hltn "sport = :$AMQP_PORT" 2>/dev/null | awk '{print $4}' | grep -Eq '^(0\.0\.0\.0|\*|\[::\]):'; then
    warn "RabbitMQ listens on all interfaces (port $AMQP_PORT) with the guest account; for local development"
    warn "set 'listeners.tcp.1 = 127.0.0.1:$AMQP_PORT' in $RABBITMQ_CONF and restart it."
  fi
}

if rabbit_up; then
  info "RabbitMQ is up on $HOST:$AMQP_PORT."
  warn_if_rabbit_exposed
elif command -v rabbitmq-server >/dev/null 2>&1; then
  start_rabbitmq || failed=1
else
  err "RabbitMQ is not answering on $HOST:$AMQP_PORT and is not installed here."
  missing_packages+=(rabbitmq-server)
fi

# ----------------------------------------------------------------------------------------------------------------

if ((${#missing_packages[@]} > 0)); then
  sudo=""
  [[ $EUID -eq 0 ]] || sudo="sudo "
  err "Install the missing server(s), then run this script again:"
  err "  ${sudo}apt-get update && ${sudo}apt-get install -y ${missing_packages[*]}"
  err "(or point DATABASE_URL / AMQP_URL at existing servers; without them 'pnpm start' falls back to embedded mode)"
  exit 1
fi
if ((failed)); then
  exit 1
fi
info "Infrastructure ready: postgres://$PG_USER@$HOST:$PG_PORT/postgres  amqp://guest:guest@$HOST:$AMQP_PORT"
exit 0
