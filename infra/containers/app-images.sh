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
[ $# -gt 0 ] || set -- identity ledger currency webhook-ingest webhook-delivery provider-sandbox gateway provision
log() { echo "[app-images] $*" >&2; }

docker image inspect "$NODE_BASE_IMAGE" >/dev/null 2>&1 ||
  { echo "$NODE_BASE_IMAGE is missing: bash infra/containers/base-images.sh node" >&2; exit 1; }

started=$SECONDS
deploy=$work/deploy
bash "$root/infra/deploy-folders.sh" "$deploy" "$@" >"$work/deploy-folders.log" 2>&1 ||
  { tail -30 "$work/deploy-folders.log" >&2; exit 1; }
log "deploy folders: $((SECONDS - started)) s"
# What an image holds, as a label: the deploy folder's files, this Dockerfile and the base image. An image whose
# label matches is kept (the classic builder re-copies a whole folder to find that out).
base_id=$(docker image inspect -f '{{.Id}}' "$NODE_BASE_IMAGE")
for service in "$@"; do
  # Like /app in the image: root's and readable by all, written by no one at run time. pnpm's own records of the
  # deploy (its time, among others) are read by pnpm only, never at run time.
  chmod -R u=rwX,go=rX "$deploy/$service"
  rm -f "$deploy/$service/node_modules/.modules.yaml" "$deploy/$service/node_modules/.pnpm-workspace-state-v1.json"
  step=$SECONDS
  image="$prefix-$service:$tag"
  content=$(
    cd "$deploy/$service"
    {
      find . -type f -print0 | sort -z | xargs -0 sha256sum
      find . -type l -printf '%p -> %l\n' | sort
      sha256sum <"$here/Dockerfile.prebuilt"
      echo "$base_id"
    } |
      sha256sum | cut -c1-32
  )
  if [ "$(docker image inspect -f '{{index .Config.Labels "payments.content"}}' "$image" 2>/dev/null)" = "$content" ]; then
    log "$image: unchanged, kept"
    continue
  fi
  docker build --quiet --network none -f "$here/Dockerfile.prebuilt" --build-arg "NODE_IMAGE=$NODE_BASE_IMAGE" \
    --label "org.opencontainers.image.title=payments $service" --label "payments.content=$content" \
    -t "$image" "$deploy/$service" >/dev/null 2>"$work/build-$service.log" || { cat "$work/build-$service.log" >&2; exit 1; }
  log "$image: $((SECONDS - step)) s, $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
done
log "application images: $((SECONDS - started)) s"
