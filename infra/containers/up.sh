#!/usr/bin/env bash
# The whole system in containers on this machine, with nothing but a Docker engine and the host's network:
#  1. base images: the official ones when they are here or can be pulled; otherwise local stand-ins made from
#     Debian's packages (base-images.sh: debootstrap + docker import; kept once made, --rebuild makes them again);
#  2. the services' production images, built with no network from deploy folders made on the host (app-images.sh);
#  3. .env with fresh secrets, unless there is one (infra/compose/generate-env.sh);
#  4. `compose up -d` (compose.sh: `docker compose` or docker-compose), then waits until the edge answers.
#
#   bash infra/containers/up.sh [--rebuild] [--no-build] [--scale SERVICE=N ...] [--profile sandbox] [--ha] [--with FILE]
#
# --ha: the `ha` profile (infra/compose/ha.yml laid over docker-compose.yml): a 3-node RabbitMQ cluster, PostgreSQL
# under Patroni (two nodes, etcd ×3) behind HAProxy; its image (postgres-ha) is always made here from Debian's packages.
#
# As root. --with lays another compose file over docker-compose.yml (proof.sh: compose.drill.yml). --profile sandbox
# also has the ledger ask the sandbox for each deposit's PaymentIntent and each withdrawal's payout (PROVIDER=stripe
# against it, with .env's SANDBOX_API_KEY), unless .env or the environment names a PROVIDER.
# The gateway answers on http://127.0.0.1:${GATEWAY_PUBLISHED_PORT:-8080}. Stop with
# `bash infra/containers/compose.sh down -v` (-v also drops the data volumes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=infra/containers/images.env
. "$here/images.env"

rebuild=() build=true compose_args=() profiles=() ha=false
while [ $# -gt 0 ]; do
  case "$1" in
    --rebuild) rebuild=(--rebuild) ;;
    --no-build) build=false ;;
    --scale) compose_args+=(--scale "$2"); shift ;;
    --profile) profiles+=(--profile "$2"); [ "$2" = sandbox ] && sandbox=true; [ "$2" = ha ] && ha=true; shift ;;
    --ha) ha=true ;;
    --with) export CONTAINERS_COMPOSE_FILES="${CONTAINERS_COMPOSE_FILES:+$CONTAINERS_COMPOSE_FILES:}$2"; shift ;;
    *) echo "usage: $0 [--rebuild] [--no-build] [--scale SERVICE=N ...] [--profile sandbox] [--ha] [--with FILE]" >&2; exit 2 ;;
  esac
  shift
done
if $ha; then
  [[ ":${CONTAINERS_COMPOSE_FILES:-}:" == *"/compose/ha.yml:"* ]] ||
    export CONTAINERS_COMPOSE_FILES="$root/infra/compose/ha.yml${CONTAINERS_COMPOSE_FILES:+:$CONTAINERS_COMPOSE_FILES}"
  [[ " ${profiles[*]} " == *" ha "* ]] || profiles+=(--profile ha)
fi
log() { echo "[up] $*" >&2; }
command -v docker >/dev/null && docker info >/dev/null 2>&1 ||
  { echo "no Docker engine answers (apt-get install -y docker.io; then start dockerd)" >&2; exit 1; }
# The 28.x client builds with BuildKit only through the buildx plugin; the classic builder needs nothing more.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
total=$SECONDS

# 1. PostgreSQL, RabbitMQ and nginx: official when at hand, else the stand-ins (recorded in .env below).
official=(postgres:16 rabbitmq:3.13-management nginx:1.27-alpine)
standins=true
if [ -z "${CONTAINERS_LOCAL_BASES:-}" ]; then
  present=0
  for image in "${official[@]}"; do docker image inspect "$image" >/dev/null 2>&1 && present=$((present + 1)); done
  if [ "$present" = "${#official[@]}" ]; then
    standins=false
  elif timeout 30 docker pull -q "${official[0]}" >/dev/null 2>&1 &&
    timeout 120 docker pull -q "${official[1]}" >/dev/null 2>&1 && timeout 60 docker pull -q "${official[2]}" >/dev/null 2>&1; then
    standins=false
  fi
elif [ "$CONTAINERS_LOCAL_BASES" = 0 ]; then
  standins=false
fi
if $build; then
  step=$SECONDS
  bases=(node)
  if $standins; then
    log "no registry: local stand-ins for the base images"
    bases+=(postgres rabbitmq nginx)
  fi
  $ha && bases+=(postgres-ha)
  bash "$here/base-images.sh" "${rebuild[@]}" "${bases[@]}"
  log "base images: $((SECONDS - step)) s"
  # 2. The services' images, no network during the build.
  step=$SECONDS
  bash "$here/app-images.sh"
  log "application images: $((SECONDS - step)) s"
fi

# 3. Secrets, and which base images compose runs.
cd "$root"
# Writes .env when there is none; adds only what an older one lacks (the `ha` profile's secrets, say).
bash infra/compose/generate-env.sh >&2
if $standins && ! grep -q '^POSTGRES_IMAGE=' .env; then
  cat >>.env <<ENV
# Added by infra/containers/up.sh: this machine cannot pull, so compose runs the local stand-ins (not the official
# images; see infra/containers/base-images.sh). Delete these lines to use the official images.
POSTGRES_IMAGE=$POSTGRES_STANDIN_IMAGE
RABBITMQ_IMAGE=$RABBITMQ_STANDIN_IMAGE
EDGE_IMAGE=$EDGE_STANDIN_IMAGE
ENV
fi

# With the sandbox, the ledger asks it for each deposit and payout as it would ask Stripe (read from .env, never
# sourced).
if [ "${sandbox:-}" = true ] && [ -z "${PROVIDER:-}" ] && ! grep -q '^PROVIDER=' .env; then
  sandbox_key=$(sed -n 's/^SANDBOX_API_KEY=//p' .env | tail -n 1 | tr -d "'\"")
  [ -n "$sandbox_key" ] ||
    { echo ".env has no SANDBOX_API_KEY for the sandbox (add SANDBOX_API_KEY=sk_test_<random>, as generate-env.sh does)" >&2; exit 1; }
  export PROVIDER=stripe STRIPE_API_URL=http://provider-sandbox:3005 STRIPE_SECRET_KEY=$sandbox_key
  # The payment page confirms at the sandbox (its published port), not with Stripe.js.
  export PAYMENT_PAGE_PROVIDER=${PAYMENT_PAGE_PROVIDER:-sandbox}
  log "the ledger asks the provider sandbox for each deposit and payout (PROVIDER=stripe, STRIPE_API_URL=$STRIPE_API_URL)"
fi

# 4. Up, and wait until a request through the edge reaches a gateway.
step=$SECONDS
bash "$here/compose.sh" "${profiles[@]}" up -d --no-build "${compose_args[@]}" >&2
url="http://127.0.0.1:${GATEWAY_PUBLISHED_PORT:-8080}"
for _ in $(seq 1 120); do
  if node -e "fetch('$url/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then
    log "up and answering on $url: compose up $((SECONDS - step)) s, in all $((SECONDS - total)) s"
    exit 0
  fi
  sleep 1
done
bash "$here/compose.sh" ps >&2
echo "the system did not answer on $url/health within 120 s" >&2
exit 1
