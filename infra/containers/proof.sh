#!/usr/bin/env bash
# The full proof that the system runs in containers on this machine, one command, as root:
#  1. up.sh: base images (local stand-ins when nothing can be pulled), the services' images built with no network,
#     .env, and `compose up` with ledger ×1, webhook-ingest ×2, gateway ×2 behind the edge;
#  2. the deposit flow and the CLI through the edge on 127.0.0.1 (scripts/containers-check.ts; with --smoke also
#     the provider sandbox, and the X-Forwarded-For attack on identity from inside the containers);
#  3. the deposit pipeline's throughput with one ledger consumer, then scaled to two (same run both times:
#     bench/src/compose-pipeline.ts);
#  4. the load reached every replica of gateway, webhook-ingest and ledger (scripts/containers-spread.ts);
#  5. `pnpm drill` against the compose system (duplicates, ingest, database): 0 discrepancies;
#  6. `compose down -v` (images stay), and a summary.
#
#   bash infra/containers/proof.sh [--smoke | --ha] [--keep] [--rebuild]
#
# The edge is published on 127.0.0.1:${GATEWAY_PUBLISHED_PORT:-18080}; PostgreSQL on :15432, RabbitMQ on :15673 and :15672.
# --smoke: only 1 and 2 with one replica each and the provider sandbox, then down (what a CI step could run).
# --ha: the `ha` profile (infra/compose/ha.yml: RabbitMQ ×3, PostgreSQL under Patroni behind HAProxy): 1 and 2, then
#   the four HA drills (`pnpm drill` with DRILL_ONLY=ha-postgres-failover,ha-postgres-standby,ha-broker-kill,
#   ha-broker-partition: the primary killed, the standby stopped, the ledger's broker node killed, then partitioned
#   and healed), each under load and ending at 0 discrepancies, then down.
# --keep: leave it running.
# DRILL_SECONDS (default 30) is each drill's fault phase; BENCH_SECONDS (default 10) each throughput run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
smoke=false keep=false ha=false up_args=()
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=true ;;
    --ha) ha=true ;;
    --keep) keep=true ;;
    --rebuild) up_args+=(--rebuild) ;;
    *) echo "usage: $0 [--smoke | --ha] [--keep] [--rebuild]" >&2; exit 2 ;;
  esac
done
$smoke && $ha && { echo "--smoke and --ha are two proofs: name one" >&2; exit 2; }
profiles=(--profile sandbox)
if $ha; then
  # Every compose command below (down included) sees the ha services.
  export CONTAINERS_COMPOSE_FILES=$here/../compose/ha.yml
  profiles+=(--profile ha)
  # The ha file's secrets, added to an .env written before it existed (before the first `down` reads it).
  [ ! -e .env ] || bash infra/compose/generate-env.sh >&2
fi
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-payments}
# Not 8080, which `pnpm start` (or another checkout's) may hold on this machine.
export GATEWAY_PUBLISHED_PORT=${GATEWAY_PUBLISHED_PORT:-18080}
export GATEWAY_URL=http://127.0.0.1:$GATEWAY_PUBLISHED_PORT
summary=()
note() { summary+=("$*"); echo "[proof] $*" >&2; }
# shellcheck source=../pnpm.sh
source infra/pnpm.sh
tsx() { node --conditions=development --import tsx "$@"; }
compose() { bash "$here/compose.sh" "$@"; }
finish() {
  status=$?
  if [ $status -ne 0 ]; then
    echo "[proof] FAILED (exit $status); the containers' state:" >&2
    compose ps >&2 || true
  fi
  if ! $keep; then compose "${profiles[@]}" down -v --remove-orphans >/dev/null 2>&1 || true; fi
  echo
  echo "== containers proof: $([ $status -eq 0 ] && echo PASS || echo FAIL) in $SECONDS s"
  for line in "${summary[@]}"; do echo "   $line"; done
  exit $status
}
trap finish EXIT

# 1. Images and the topology (from nothing: the volumes of an earlier run are dropped first).
compose "${profiles[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
step=$SECONDS
if $ha; then
  export CONTAINERS_COMPOSE_FILES=$CONTAINERS_COMPOSE_FILES:$here/compose.drill.yml
  bash "$here/up.sh" "${up_args[@]}" --ha --scale webhook-ingest=2 --scale gateway=2
elif $smoke; then
  # With the provider sandbox, whose confirmations the CLI waits for (the drills below must not have it).
  bash "$here/up.sh" "${up_args[@]}" --profile sandbox
  # And the X-Forwarded-For attack on identity, which needs its default per-address limit (not compose.drill.yml).
  export CHECK_SANDBOX=1 CHECK_TRUST=1
else
  export CONTAINERS_COMPOSE_FILES=$here/compose.drill.yml
  bash "$here/up.sh" "${up_args[@]}" --scale ledger=1 --scale webhook-ingest=2 --scale gateway=2
fi
note "images built and compose up until the edge answered: $((SECONDS - step)) s"

# 2. The deposit flow and the CLI.
step=$SECONDS
result=$(tsx scripts/containers-check.ts)
echo "[proof] $result" >&2
note "deposit flow (register, login, account, deposit, forged/unsigned webhooks refused, signed one credited once) and CLI${CHECK_SANDBOX:+ (and a deposit the sandbox confirms)}${CHECK_TRUST:+; identity believes X-Forwarded-For from the forwarding network only}: ok in $((SECONDS - step)) s"
$smoke && exit 0

set -a
# shellcheck disable=SC1091
. ./.env
set +a
export BENCH_GATEWAY_URL=$GATEWAY_URL
export BENCH_POSTGRES_URL="postgres://postgres:$POSTGRES_PASSWORD@127.0.0.1:${DRILL_POSTGRES_PORT:-15432}/postgres"
export BENCH_AMQP_URL="amqp://$RABBITMQ_ADMIN_USER:$RABBITMQ_ADMIN_PASSWORD@127.0.0.1:${DRILL_AMQP_PORT:-15673}"
export BENCH_WEBHOOK_SECRET=${WEBHOOK_SECRETS%%,*} BENCH_SERVICE_TOKEN=${SERVICE_TOKEN%%,*}
export BENCH_SECONDS=${BENCH_SECONDS:-10}

# --ha: the HA drills against the cluster, then down.
if $ha; then
  step=$SECONDS
  log=${TMPDIR:-/tmp}/containers-ha-drill.log
  DRILL_COMPOSE_PROJECT=$COMPOSE_PROJECT_NAME DRILL_SECONDS=${DRILL_SECONDS:-30} \
    DRILL_ONLY=ha-postgres-failover,ha-postgres-standby,ha-broker-kill,ha-broker-partition \
    pnpm --silent drill >"$log" 2>&1 || { tail -80 "$log" >&2; exit 1; }
  while IFS= read -r line; do note "drill $line"; done < <(grep -E '^   injected: (clients|recovery)' "$log" | sed 's/^   injected: //')
  while IFS= read -r line; do note "drill $line"; done < <(grep -E '^\| [a-zA-Z]' "$log" | grep -v '^| drill')
  note "$(grep -E '^[0-9]+ drills, ' "$log") — $((SECONDS - step)) s (the whole report: $log)"
  exit 0
fi

# 3. Throughput, one ledger consumer and then two.
figure() {
  node -e "const r=JSON.parse(process.argv[1]), a=r.ledgerAlone;
    console.log('webhook → credit '+Math.round(r.creditedPerSecond)+'/s ('+r.credited+' deposits, p50 '+Math.round(r.latency.p50)+' ms, p99 '+Math.round(r.latency.p99)+' ms, ledger queue max '+r.maxQueueDepth+'); ledger alone '+Math.round(a.creditedPerSecond)+'/s ('+a.credited+' deposits)')" "$1"
}
one=$(PIPELINE_LABEL="ledger x1" tsx bench/src/compose-pipeline.ts)
note "deposit pipeline, ledger ×1 (webhook-ingest ×2, gateway ×2): $(figure "$one")"
bash "$here/up.sh" --no-build --scale ledger=2 --scale webhook-ingest=2 --scale gateway=2
two=$(PIPELINE_LABEL="ledger x2" tsx bench/src/compose-pipeline.ts)
note "deposit pipeline, ledger ×2 (webhook-ingest ×2, gateway ×2): $(figure "$two")"

# 4. Every replica took a share.
spread=$(tsx scripts/containers-spread.ts)
note "load per replica (gateway requests, webhook-ingest webhooks, ledger deliveries): $spread"

# 5. The drills, against the scaled system.
step=$SECONDS
DRILL_COMPOSE_PROJECT=$COMPOSE_PROJECT_NAME DRILL_SECONDS=${DRILL_SECONDS:-30} pnpm --silent drill >"${TMPDIR:-/tmp}/containers-drill.log" 2>&1 ||
  { tail -60 "${TMPDIR:-/tmp}/containers-drill.log" >&2; exit 1; }
while IFS= read -r line; do note "drill $line"; done < <(grep -E '^\| [a-zA-Z]' "${TMPDIR:-/tmp}/containers-drill.log" | grep -v '^| drill')
note "$(grep -E '^[0-9]+ drills, ' "${TMPDIR:-/tmp}/containers-drill.log") — $((SECONDS - step)) s"
