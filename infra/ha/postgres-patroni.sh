#!/usr/bin/env bash
# PostgreSQL with failover as local processes on 127.0.0.1: etcd, two Patroni-managed nodes (a primary and a
# synchronous standby) and HAProxy routing to whichever node Patroni's REST API calls the primary.
#
#   bash infra/ha/postgres-patroni.sh up       # start (or find running), wait for a leader and a streaming sync standby
#   bash infra/ha/postgres-patroni.sh status   # the cluster as Patroni sees it
#   bash infra/ha/postgres-patroni.sh down     # stop everything it started and remove its data
#   bash infra/ha/postgres-patroni.sh kill-node pg1   # lose a node: SIGKILL its Patroni, postmaster and backends
#   bash infra/ha/postgres-patroni.sh start-node pg1  # bring it back; Patroni rejoins it (pg_rewind if need be)
#
# Clients connect to postgres://postgres@127.0.0.1:$HA_PG_PORT/postgres (HAProxy, 15432 by default). Nothing here
# decides who the primary is: Patroni holds the leader key in etcd, HAProxy asks each node's `GET /primary`.
# synchronous_mode is on and synchronous_mode_strict off: while the standby is away the primary goes on committing
# alone (docs/adr/0114). Packages: `apt-get install -y patroni etcd-server haproxy` and a PostgreSQL server.
set -euo pipefail

ACTION="${1:-up}"
BASE="${HA_PG_DIR:-/tmp/payments-ha-postgres}"
HAPROXY_PORT="${HA_PG_PORT:-15432}"
NODE_PORTS=("${HA_PG_NODE1_PORT:-15433}" "${HA_PG_NODE2_PORT:-15434}")
REST_PORTS=("${HA_PG_NODE1_REST_PORT:-18008}" "${HA_PG_NODE2_REST_PORT:-18009}")
ETCD_CLIENT_PORT="${HA_ETCD_PORT:-12379}"
ETCD_PEER_PORT="${HA_ETCD_PEER_PORT:-12380}"
HAPROXY_STATS_PORT="${HA_HAPROXY_STATS_PORT:-17000}"
SCOPE="payments-ha"
NAMES=(pg1 pg2)
# Short timings so a drill sees a failover within about the TTL (Patroni needs loop_wait + 2 × retry_timeout ≤ ttl).
TTL="${HA_PATRONI_TTL:-15}"
LOOP_WAIT="${HA_PATRONI_LOOP_WAIT:-2}"
RETRY_TIMEOUT="${HA_PATRONI_RETRY_TIMEOUT:-5}"

say() { echo "[postgres-patroni] $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

# PostgreSQL refuses to run as root: Patroni and etcd run as the postgres user when this runs as root.
if [ "$(id -u)" = 0 ]; then
  RUN_AS=postgres
  id "$RUN_AS" >/dev/null 2>&1 || die "no user '$RUN_AS' to run PostgreSQL as (install postgresql, or run as a non-root user)"
  # setpriv execs (runuser would fork), so a pid file names the process itself.
  AS_OWNER=(setpriv "--reuid=$RUN_AS" "--regid=$RUN_AS" --init-groups env "HOME=$BASE")
else
  RUN_AS="$(id -un)"
  AS_OWNER=(env "HOME=$BASE")
fi

find_pg_bin() {
  if [ -n "${HA_PG_BIN_DIR:-}" ]; then
    [ -x "$HA_PG_BIN_DIR/postgres" ] && echo "$HA_PG_BIN_DIR"
    return
  fi
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/postgres" ] && [ -x "$dir/initdb" ] && echo "$dir" && return
  done
}

check_tools() {
  local missing=()
  command -v patroni >/dev/null || missing+=("patroni (apt-get install -y patroni)")
  command -v etcd >/dev/null || missing+=("etcd (apt-get install -y etcd-server)")
  command -v haproxy >/dev/null || missing+=("haproxy (apt-get install -y haproxy)")
  command -v curl >/dev/null || missing+=("curl")
  PG_BIN="$(find_pg_bin || true)"
  [ -n "$PG_BIN" ] || missing+=("a PostgreSQL server: /usr/lib/postgresql/<version>/bin/postgres (or set HA_PG_BIN_DIR)")
  if [ "${#missing[@]}" -gt 0 ]; then
    say "missing:"
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
  fi
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits up to $1 seconds for the command after it to succeed; says what it waited for when it gives up.
wait_for() {
  local seconds="$1" what="$2"
  shift 2
  local until=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$until" ]; then
      say "gave up after ${seconds} s waiting for $what"
      show_logs
      exit 1
    fi
    sleep 0.5
  done
}

show_logs() {
  local log
  for log in "$BASE"/logs/*.log; do
    [ -f "$log" ] || continue
    say "--- last lines of $log"
    tail -n 15 "$log" >&2
  done
}

# Starts a detached process as the data's owner; its pid goes to $BASE/run/<name>.pid.
start_detached() {
  local name="$1"
  shift
  "${AS_OWNER[@]}" setsid "$@" >>"$BASE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$BASE/run/$name.pid"
}

write_patroni_config() {
  local i="$1" name="${NAMES[$1]}"
  cat >"$BASE/$name.yml" <<EOF
scope: $SCOPE
name: $name
restapi:
  listen: 127.0.0.1:${REST_PORTS[$i]}
  connect_address: 127.0.0.1:${REST_PORTS[$i]}
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT_PORT
bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: $LOOP_WAIT
    retry_timeout: $RETRY_TIMEOUT
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
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication replicator 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${NODE_PORTS[$i]}
  connect_address: 127.0.0.1:${NODE_PORTS[$i]}
  data_dir: $BASE/data/$name
  bin_dir: $PG_BIN
  pgpass: $BASE/run/pgpass-$name
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: $BASE/run
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
}

write_haproxy_config() {
  cat >"$BASE/haproxy.cfg" <<EOF
global
  maxconn 1000
  pidfile $BASE/run/haproxy.pid
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen stats
  mode http
  bind 127.0.0.1:$HAPROXY_STATS_PORT
  stats enable
  stats uri /
listen primary
  bind 127.0.0.1:$HAPROXY_PORT
  option httpchk
  http-check send meth GET uri /primary
  http-check expect status 200
  # A node that stops being the primary loses its sessions at once, so no client writes to a demoted node.
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
  server ${NAMES[0]} 127.0.0.1:${NODE_PORTS[0]} maxconn 300 check port ${REST_PORTS[0]}
  server ${NAMES[1]} 127.0.0.1:${NODE_PORTS[1]} maxconn 300 check port ${REST_PORTS[1]}
EOF
}

cluster_json() { curl -fsS "http://127.0.0.1:${REST_PORTS[$1]}/cluster"; }

# True when some node answers that the cluster has a running leader and a streaming synchronous standby.
cluster_ready() {
  local i json
  for i in 0 1; do
    json="$(cluster_json "$i" 2>/dev/null)" || continue
    echo "$json" | grep -q '"role": *"leader"' || continue
    echo "$json" | grep -Eq '"role": *"sync_standby"[^}]*"state": *"(streaming|running)"|"state": *"(streaming|running)"[^}]*"role": *"sync_standby"' || continue
    return 0
  done
  return 1
}

leader_answers() {
  local i
  for i in 0 1; do curl -fsS "http://127.0.0.1:${REST_PORTS[$i]}/primary" >/dev/null 2>&1 && return 0; done
  return 1
}

through_haproxy() { "$PG_BIN/psql" -h 127.0.0.1 -p "$HAPROXY_PORT" -U postgres -d postgres -Atc 'SELECT NOT pg_is_in_recovery()' | grep -q t; }

streams() {
  "$PG_BIN/psql" -h 127.0.0.1 -p "$HAPROXY_PORT" -U postgres -d postgres -Atc \
    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'" | grep -q '^1$'
}

etcd_healthy() { curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health" | grep -q '"health":"true"'; }

all_running() {
  pid_alive "$BASE/run/etcd.pid" && pid_alive "$BASE/run/${NAMES[0]}.pid" && pid_alive "$BASE/run/${NAMES[1]}.pid" &&
    pid_alive "$BASE/run/haproxy.pid"
}

up() {
  check_tools
  if all_running && cluster_ready && through_haproxy; then
    say "already up: HAProxy on 127.0.0.1:$HAPROXY_PORT"
    status
    return
  fi
  if [ -d "$BASE" ]; then
    say "a partial cluster is left in $BASE: taking it down first"
    down
  fi
  local port
  for port in "$HAPROXY_PORT" "${NODE_PORTS[@]}" "${REST_PORTS[@]}" "$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT" "$HAPROXY_STATS_PORT"; do
    port_taken "$port" && die "127.0.0.1:$port is taken by a process this script did not start (set the HA_* ports)"
  done
  mkdir -p "$BASE"/{data,logs,run,etcd}
  chmod 700 "$BASE/data"
  chown -R "$RUN_AS" "$BASE"

  say "etcd on 127.0.0.1:$ETCD_CLIENT_PORT"
  start_detached etcd etcd --name etcd0 --data-dir "$BASE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "etcd0=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
  wait_for 30 "etcd to answer /health" etcd_healthy

  local i
  for i in 0 1; do write_patroni_config "$i"; done
  chown -R "$RUN_AS" "$BASE"
  say "Patroni ${NAMES[0]} (PostgreSQL on :${NODE_PORTS[0]}, REST on :${REST_PORTS[0]}) bootstraps the cluster"
  start_detached "${NAMES[0]}" patroni "$BASE/${NAMES[0]}.yml"
  wait_for 90 "a leader (Patroni's GET /primary)" leader_answers
  say "Patroni ${NAMES[1]} (PostgreSQL on :${NODE_PORTS[1]}, REST on :${REST_PORTS[1]}) joins as a standby"
  start_detached "${NAMES[1]}" patroni "$BASE/${NAMES[1]}.yml"
  wait_for 120 "the standby to stream as the synchronous standby" cluster_ready

  write_haproxy_config
  say "HAProxy on 127.0.0.1:$HAPROXY_PORT → the node answering GET /primary (stats on :$HAPROXY_STATS_PORT)"
  haproxy -D -f "$BASE/haproxy.cfg"
  wait_for 30 "HAProxy to reach the primary" through_haproxy
  wait_for 30 "pg_stat_replication to show a streaming sync standby" streams
  say "up: postgres://postgres@127.0.0.1:$HAPROXY_PORT/postgres"
  status
}

stop_pidfile() {
  local file="$1" signal="${2:-TERM}" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# The postmaster of a node, from its data directory's postmaster.pid.
postmaster_pid() { head -n 1 "$BASE/data/$1/postmaster.pid" 2>/dev/null || true; }

down() {
  [ -d "$BASE" ] || {
    say "nothing to stop ($BASE does not exist)"
    return 0
  }
  stop_pidfile "$BASE/run/haproxy.pid"
  local name pid
  # Patroni stops its PostgreSQL on SIGTERM; a postmaster left behind (its Patroni killed by a drill) is stopped too.
  for name in "${NAMES[@]}"; do stop_pidfile "$BASE/run/$name.pid"; done
  for name in "${NAMES[@]}"; do
    pid="$(postmaster_pid "$name")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      say "stopping the postmaster of $name left without its Patroni"
      kill -INT "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
      done
    fi
  done
  stop_pidfile "$BASE/run/etcd.pid"
  rm -rf "$BASE"
  say "down: stopped and removed $BASE"
}

status() {
  local i
  for i in 0 1; do
    if cluster_json "$i" 2>/dev/null; then
      echo
      return 0
    fi
  done
  say "no Patroni node answers on 127.0.0.1:${REST_PORTS[0]} or :${REST_PORTS[1]}"
  return 1
}

node_name() {
  case "${1:-}" in
    "${NAMES[0]}" | "${NAMES[1]}") echo "$1" ;;
    *) die "name a node: ${NAMES[*]}" ;;
  esac
}

# A node lost as a machine is: Patroni first (so it cannot restart PostgreSQL), then the postmaster and every
# process it forked, all with SIGKILL, nothing flushed or handed over.
kill_node() {
  local name pm children
  name="$(node_name "${1:-}")"
  [ -f "$BASE/run/$name.pid" ] && kill -KILL "$(cat "$BASE/run/$name.pid")" 2>/dev/null || true
  rm -f "$BASE/run/$name.pid"
  pm="$(postmaster_pid "$name")"
  if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
    children="$(ps -o pid= --ppid "$pm" || true)"
    kill -KILL "$pm" $children 2>/dev/null || true
  fi
  say "killed node $name (Patroni, postmaster ${pm:-none} and its processes)"
}

start_node() {
  local name
  name="$(node_name "${1:-}")"
  check_tools
  pid_alive "$BASE/run/$name.pid" && die "node $name runs already"
  [ -f "$BASE/$name.yml" ] || die "no configuration for $name in $BASE: run up first"
  start_detached "$name" patroni "$BASE/$name.yml"
  say "started Patroni $name"
}

case "$ACTION" in
  up) up ;;
  kill-node) kill_node "${2:-}" ;;
  start-node) start_node "${2:-}" ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 up|down|status|kill-node NAME|start-node NAME" ;;
esac
