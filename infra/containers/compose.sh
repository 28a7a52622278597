#!/usr/bin/env bash
# Runs compose for this repository's docker-compose.yml with whichever compose this machine has: the v2 plugin
# (`docker compose`) when present, else docker-compose 1.29 (Debian bookworm's package). Project name
# COMPOSE_PROJECT_NAME (default payments).
#
#   bash infra/containers/compose.sh ps          # any compose subcommand
#
# CONTAINERS_COMPOSE_FILES: more files (colon-separated) laid over docker-compose.yml, e.g. compose.drill.yml.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-payments}
cd "$root"
files=(-f docker-compose.yml)
IFS=: read -r -a extra <<<"${CONTAINERS_COMPOSE_FILES:-}"
for file in "${extra[@]}"; do [ -n "$file" ] && files+=(-f "$file"); done
if docker compose version >/dev/null 2>&1; then
  exec docker compose --project-directory "$root" "${files[@]}" "$@"
elif command -v docker-compose >/dev/null; then
  exec docker-compose --project-directory "$root" "${files[@]}" "$@"
else
  echo "no compose: install the compose plugin, or docker-compose (apt-get install -y docker-compose)" >&2
  exit 1
fi
