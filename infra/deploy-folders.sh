#!/usr/bin/env bash
# What each production image holds: per service, a folder with its compiled code (dist/) and only its production
# dependencies, the workspace packages it uses compiled too (`pnpm deploy --prod`). Started there with plain
# `node dist/main.js`; the provisioner's folder (@payments/infra, packages/infra) with `node dist/bin/provision.js`.
# Installs (`pnpm install --frozen-lockfile`, a no-op when node_modules is current) and builds first (`pnpm build`,
# incremental). Needs no network when the pnpm store holds every package (after `pnpm install` or `pnpm fetch`).
#
#   bash infra/deploy-folders.sh OUT_DIR [service ...]     # default: every service and the provisioner
#
# The Dockerfile runs this in its build stage. pnpm is run as infra/pnpm.sh says (PNPM names another command).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: bash infra/deploy-folders.sh OUT_DIR [service ...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=pnpm.sh
source infra/pnpm.sh

declare -A PACKAGES=(
  [identity]=@payments/identity
  [ledger]=@payments/ledger
  [currency]=@payments/currency
  [webhook-ingest]=@payments/webhook-ingest
  [webhook-delivery]=@payments/webhook-delivery
  [provider-sandbox]=@payments/provider-sandbox
  [gateway]=@payments/gateway
  [provision]=@payments/infra
)
if [ $# -eq 0 ]; then
  set -- identity ledger currency webhook-ingest webhook-delivery provider-sandbox gateway provision
fi
for name in "$@"; do
  [ -n "${PACKAGES[$name]:-}" ] || { echo "unknown service: $name (one of: ${!PACKAGES[*]})" >&2; exit 2; }
done

# A fresh clone has no node_modules yet (nothing to build with); an installed one is checked against the lockfile
# in a second or two.
pnpm install --frozen-lockfile --prefer-offline >&2
pnpm build
# The operator console's static build (console/dist), which the gateway's folder carries with @payments/console.
pnpm --filter @payments/console run build >&2

for name in "$@"; do
  rm -rf "${out:?}/$name"
  # pnpm 10 deploys from the lockfile only with injected workspace packages; asked for here alone, because the
  # development install must keep its workspace links (an edit in packages/ is seen at once).
  pnpm --filter "${PACKAGES[$name]}" deploy --prod --prefer-offline --config.inject-workspace-packages=true \
    "$out/$name" >/dev/null
  # Nothing here is read at run time: the lockfile pnpm leaves, type declarations, source maps, documentation.
  rm -f "$out/$name/pnpm-lock.yaml"
  find "$out/$name" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) \
    -delete
  echo "$name: $(du -sh "$out/$name" | cut -f1) in $out/$name"
done
