#!/usr/bin/env bash
# A 3-node RabbitMQ cluster as local processes on 127.0.0.1, for the HA drills
# (DRILL_ONLY=ha-broker-kill,ha-broker-partition pnpm drill).
#
#   infra/ha/rabbitmq-cluster.sh start        # start the three nodes, join them, wait until all three run
#   infra/ha/rabbitmq-cluster.sh env          # AMQP_URL (all three nodes) and RABBITMQ_MANAGEMENT_URL, as shell
#   infra/ha/rabbitmq-cluster.sh status       # each node: running (with its pid) or down
#   infra/ha/rabbitmq-cluster.sh kill N       # SIGKILL node N's Erlang VM (a lost machine), left down
#   infra/ha/rabbitmq-cluster.sh start-node N # start node N again; it rejoins from its data dir
#   infra/ha/rabbitmq-cluster.sh pid N        # the pid of node N's Erlang VM
#   infra/ha/rabbitmq-cluster.sh partition N  # cut node N's distribution traffic to and from the others
#   infra/ha/rabbitmq-cluster.sh heal         # let it through again
#   infra/ha/rabbitmq-cluster.sh stop         # stop every node, keep the data
#   infra/ha/rabbitmq-cluster.sh clean        # stop, then delete the run dir
#
# Nodes payments-ha-N@localhost (N = 1..3): AMQP 127.0.0.1:568N, distribution 127.0.0.1:2568N, management
# 127.0.0.1:1568N (provisioning creates the per-service users through it), data and logs under the run dir, one
# Erlang cookie of their own there (HOME is the run dir). cluster_partition_handling = pause_minority
# (docs/adr/0113). The machine's own RabbitMQ (rabbit@<host>, :5672) is never touched: other names, ports, cookie.
# Idempotent: `start` on a running cluster changes nothing; a node already a member is not joined again.
#
# The partition is real packet loss on loopback: each node runs in a cgroup (v2) of its own, and an nftables table
# (inet payments_ha_partition) drops, on output, every packet node N's sockets send to the other nodes'
# distribution ports or from its own, and every packet anyone sends to its distribution port. AMQP, management and
# epmd stay open: the nodes lose each other, the clients do not lose node N (pause_minority closes it to them).
# Needs nft (apt-get install nftables) and a cgroup2 mount; `heal` deletes the table, `stop` and `clean` too.
#
# Environment (optional): PAYMENTS_HA_DIR (run dir, /tmp/payments-ha-rabbitmq), HA_WAIT_SECONDS (90),
# HA_NET_TICKTIME (10: seconds until a silent peer counts as gone; Erlang's default 60 would make a partition take
# a minute to be noticed).

set -uo pipefail

RUN_DIR="${PAYMENTS_HA_DIR:-/tmp/payments-ha-rabbitmq}"
WAIT_SECONDS="${HA_WAIT_SECONDS:-90}"
NET_TICKTIME="${HA_NET_TICKTIME:-10}"
NODES=(1 2 3)
RABBITMQ_BIN="${RABBITMQ_BIN:-/usr/lib/rabbitmq/bin}"

info() { printf '[ha-rabbitmq] %s\n' "$*" >&2; }
die() {
  printf '[ha-rabbitmq] ERROR: %s\n' "$*" >&2
  exit 1
}

node_name() { printf 'payments-ha-%s@localhost' "$1"; }
amqp_port() { printf '568%s' "$1"; }
dist_port() { printf '2568%s' "$1"; }
management_port() { printf '1568%s' "$1"; }
node_dir() { printf '%s/node%s' "$RUN_DIR" "$1"; }
NFT_TABLE=payments_ha_partition

# Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1), or nothing.
cgroup2_mount() { awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts; }
node_cgroup() { printf 'payments-ha-%s' "$1"; }

# The server script itself, not Debian's /usr/sbin wrapper: that one switches to the rabbitmq user and its HOME,
# whose cookie is the machine's node's.
require_tools() {
  local missing=()
  for tool in rabbitmq-server rabbitmqctl rabbitmq-plugins; do
    [[ -x "$RABBITMQ_BIN/$tool" ]] || command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  command -v erl >/dev/null 2>&1 || missing+=(erl)
  ((${#missing[@]} == 0)) ||
    die "missing ${missing[*]}: install RabbitMQ and Erlang (apt-get install rabbitmq-server), or set RABBITMQ_BIN"
  [[ -x "$RABBITMQ_BIN/rabbitmq-server" ]] || RABBITMQ_BIN="$(dirname "$(command -v rabbitmq-server)")"
  [[ -d /usr/lib/rabbitmq/lib ]] && ! compgen -G "/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbitmq_management-*" >/dev/null &&
    die "the rabbitmq_management plugin is not installed (provisioning creates users through it)"
  return 0
}

ctl() {
  local n="$1"
  shift
  HOME="$RUN_DIR" timeout 60 "$RABBITMQ_BIN/rabbitmqctl" -q -n "$(node_name "$n")" "$@"
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

node_running() { ctl "$1" await_startup --timeout 5 >/dev/null 2>&1; }

node_pid() {
  local file
  file="$(node_dir "$1")/pid"
  [[ -s "$file" ]] && kill -0 "$(cat "$file")" 2>/dev/null && cat "$file"
}

prepare() {
  mkdir -p "$RUN_DIR"
  chmod 700 "$RUN_DIR"
  if [[ ! -s "$RUN_DIR/.erlang.cookie" ]]; then
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$RUN_DIR/.erlang.cookie"
    chmod 400 "$RUN_DIR/.erlang.cookie"
  fi
  for n in "${NODES[@]}"; do
    local dir
    dir="$(node_dir "$n")"
    mkdir -p "$dir/data" "$dir/log"
    cat >"$dir/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$(amqp_port "$n")
management.tcp.ip = 127.0.0.1
management.tcp.port = $(management_port "$n")
cluster_partition_handling = pause_minority
loopback_users.guest = true
log.file.level = warning
EOF
    echo '[rabbitmq_management].' >"$dir/enabled_plugins"
  done
}

start_node() {
  local n="$1" dir
  dir="$(node_dir "$n")"
  if node_running "$n"; then
    info "$(node_name "$n") already running"
    return 0
  fi
  for port in "$(amqp_port "$n")" "$(dist_port "$n")" "$(management_port "$n")"; do
    port_open "$port" && die "port $port is taken by something else: stop it or set other ports"
  done
  info "starting $(node_name "$n") (AMQP :$(amqp_port "$n"), management :$(management_port "$n"))"
  local cgroups
  cgroups="$(cgroup2_mount)"
  (
    # In a cgroup of its own, so that a partition can tell its packets from the other nodes' (all on 127.0.0.1).
    if [[ -n "$cgroups" ]] && mkdir -p "$cgroups/$(node_cgroup "$n")" 2>/dev/null; then
      echo "$BASHPID" >"$cgroups/$(node_cgroup "$n")/cgroup.procs" || true
    fi
    export HOME="$RUN_DIR"
    export RABBITMQ_NODENAME="$(node_name "$n")"
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT="$(amqp_port "$n")"
    export RABBITMQ_DIST_PORT="$(dist_port "$n")"
    export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
    export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
    export RABBITMQ_MNESIA_BASE="$dir/data"
    export RABBITMQ_LOG_BASE="$dir/log"
    export RABBITMQ_PID_FILE="$dir/pid"
    export RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
    export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
    export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} -kernel net_ticktime $NET_TICKTIME"
    exec setsid "$RABBITMQ_BIN/rabbitmq-server" >"$dir/log/stdout.log" 2>&1 </dev/null
  ) &
  local deadline=$((SECONDS + WAIT_SECONDS))
  until node_running "$n"; do
    ((SECONDS < deadline)) || die "$(node_name "$n") did not start within ${WAIT_SECONDS}s; see $dir/log"
    sleep 1
  done
}

members() { ctl "$1" eval 'rabbit_nodes:all().' 2>/dev/null; }

join() {
  local n="$1" first
  first="$(node_name 1)"
  if members "$n" | grep -q "'$first'"; then return 0; fi
  info "joining $(node_name "$n") to $first"
  ctl "$n" stop_app || die "stop_app on $(node_name "$n") failed"
  ctl "$n" join_cluster "$first" || die "join_cluster $first from $(node_name "$n") failed"
  ctl "$n" start_app || die "start_app on $(node_name "$n") failed"
}

start_cluster() {
  require_tools
  prepare
  for n in "${NODES[@]}"; do start_node "$n"; done
  for n in 2 3; do join "$n"; done
  local running
  running="$(ctl 1 eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)"
  [[ "$running" == 3 ]] || die "the cluster has $running running node(s), not 3: see $(node_dir 1)/log"
  info "cluster of 3 running; $(print_env | head -1)"
}

print_env() {
  local urls=()
  for n in "${NODES[@]}"; do urls+=("amqp://guest:guest@127.0.0.1:$(amqp_port "$n")"); done
  local IFS=,
  printf 'AMQP_URL=%s\n' "${urls[*]}"
  printf 'RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:%s\n' "$(management_port 3)"
}

kill_node() {
  local n="$1" pid
  pid="$(node_pid "$n")" || die "$(node_name "$n") is not running"
  info "SIGKILL $(node_name "$n") (pid $pid)"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}

stop_node() {
  local n="$1" pid
  pid="$(node_pid "$n")" || return 0
  ctl "$n" stop >/dev/null 2>&1 || kill -KILL "$pid" 2>/dev/null
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then
      kill -KILL "$pid" 2>/dev/null
      sleep 0.5
    fi
    sleep 0.2
  done
  info "$(node_name "$n") stopped"
}

partition() {
  local n="$1" cgroups others=()
  command -v nft >/dev/null 2>&1 || die "a partition needs nft: apt-get install nftables"
  cgroups="$(cgroup2_mount)"
  [[ -n "$cgroups" && -d "$cgroups/$(node_cgroup "$n")" ]] ||
    die "a partition needs node $n in a cgroup v2 of its own (started by this script on a machine with cgroup2 mounted)"
  node_pid "$n" >/dev/null || die "$(node_name "$n") is not running"
  for m in "${NODES[@]}"; do [[ "$m" == "$n" ]] || others+=("$(dist_port "$m")"); done
  # nft names a cgroup by its path below /sys/fs/cgroup; level 1: directly below the cgroup2 root.
  local path
  path="$(node_cgroup "$n")"
  [[ "$cgroups" == /sys/fs/cgroup ]] || path="${cgroups#/sys/fs/cgroup/}/$path"
  local others_set
  others_set="$(
    IFS=,
    printf '%s' "${others[*]}"
  )"
  nft -f - <<EOF || die "nft refused the partition rules"
table inet $NFT_TABLE
delete table inet $NFT_TABLE
table inet $NFT_TABLE {
  chain output {
    type filter hook output priority 0; policy accept;
    socket cgroupv2 level 1 "$path" tcp dport { $others_set } drop
    socket cgroupv2 level 1 "$path" tcp sport $(dist_port "$n") drop
    tcp dport $(dist_port "$n") drop
  }
}
EOF
  info "$(node_name "$n") cut off from the others (nft table inet $NFT_TABLE)"
}

heal() {
  command -v nft >/dev/null 2>&1 || return 0
  if nft list table inet "$NFT_TABLE" >/dev/null 2>&1; then
    nft delete table inet "$NFT_TABLE"
    info "partition healed"
  fi
}

remove_cgroups() {
  local cgroups
  cgroups="$(cgroup2_mount)"
  [[ -n "$cgroups" ]] || return 0
  for n in "${NODES[@]}"; do rmdir "$cgroups/$(node_cgroup "$n")" 2>/dev/null || true; done
}

status() {
  for n in "${NODES[@]}"; do
    local pid
    pid="$(node_pid "$n")" || pid=''
    if [[ -n "$pid" ]] && node_running "$n"; then
      printf '%s running (pid %s)\n' "$(node_name "$n")" "$pid"
    else
      printf '%s down\n' "$(node_name "$n")"
    fi
  done
}

node_arg() {
  [[ "${1:-}" =~ ^[123]$ ]] || die "name a node: 1, 2 or 3"
}

case "${1:-}" in
  start) start_cluster ;;
  env) print_env ;;
  status) status ;;
  pid)
    node_arg "${2:-}"
    node_pid "$2" || die "$(node_name "$2") is not running"
    ;;
  kill)
    node_arg "${2:-}"
    kill_node "$2"
    ;;
  start-node)
    node_arg "${2:-}"
    require_tools
    start_node "$2"
    ;;
  partition)
    node_arg "${2:-}"
    partition "$2"
    ;;
  heal) heal ;;
  stop)
    heal
    for n in 3 2 1; do stop_node "$n"; done
    remove_cgroups
    ;;
  clean)
    heal
    for n in 3 2 1; do stop_node "$n"; done
    remove_cgroups
    rm -rf "$RUN_DIR"
    info "removed $RUN_DIR"
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
