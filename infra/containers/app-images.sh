#!/usr/bin/env bash
# The services' production images, built with no network: the deploy folders are made on the host
# (infra/deploy-folders.sh: `pnpm build`, then `pnpm deploy --prod` per service, from the pnpm store), then each is
# copied onto the node base image (Dockerfile.prebuilt, `--network none`). Named as docker-compose.yml expects:
# ${PAYMENTS_IMAGE_PREFIX:-payments}-<service>:${PAYMENTS_IMAGE_TAG:-latest}.
#
#   bash infra/containers/app-images.sh [service ...]     # default: every service and the provisioner
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=infra/containers/images.env
. "$here/images.env"
work=${CONTAINERS_WORK:-/var/tmp/payments-containers}
prefix=${PAYMENTS_IMAGE_PREFIX:-payments}
tag=${PAYMENTS_IMAGE_TAG:-latest}
[ $# -gt 0 ] || set -- identity ledger currency webhook-ingest provider-sandbox gateway provision
log() { echo "[app-images] $*" >&2; }

docker image inspect "$NODE_BASE_IMAGE" >/dev/null 2>&1 ||
  { echo "$NODE_BASE_IMAGE is missing: bash infra/containers/base-images.sh node" >&2; exit 1; }

started=$SECONDS
deploy=$work/deploy
bash "$root/infra/deploy-folders.sh" "$deploy" "$@" >"$work/deploy-folders.log" 2>&1 ||
  { tail -30 "$work/deploy-folders.log" >&2; exit 1; }
log "deploy folders: $((SECONDS - started)) s"
for service in "$@"; do
  # Like /app in the image: root's and readable by all, written by no one at run time.
  chmod -R u=rwX,go=rX "$deploy/$service"
  step=$SECONDS
  docker build --quiet --network none -f "$here/Dockerfile.prebuilt" --build-arg "NODE_IMAGE=$NODE_BASE_IMAGE" \
    --label "org.opencontainers.image.title=payments $service" \
    -t "$prefix-$service:$tag" "$deploy/$service" >/dev/null
  log "$prefix-$service:$tag: $((SECONDS - step)) s, $(docker image inspect -f '{{.Size}}' "$prefix-$service:$tag" | awk '{printf "%.0f MB", $1/1e6}')"
done
log "application images: $((SECONDS - started)) s"
