#!/usr/bin/env bash
# Builds the offline stand-ins for the official postgres and rabbitmq images, for machines where no image registry
# answers: a Debian bookworm root filesystem (debootstrap, from Debian's mirror, reachable from the host) with
# Debian's PostgreSQL 15 or RabbitMQ 3.10, imported with `docker import`. They keep the parts of the official
# images' contract that the tests and compose rely on (see stand-ins/*-entrypoint.sh); they are named as
# stand-ins, not as the official images.
#
#   infra/containers/stand-in-images.sh            # builds whichever of the two is missing
#   infra/containers/stand-in-images.sh --rebuild  # builds both again
#
# Needs root, debootstrap and a Docker engine. Environment: DEBIAN_MIRROR (http://deb.debian.org/debian),
# TEST_POSTGRES_IMAGE (payments-local/postgres:15-debian), TEST_RABBITMQ_IMAGE (payments-local/rabbitmq:3-debian).

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
POSTGRES_IMAGE=${TEST_POSTGRES_IMAGE:-payments-local/postgres:15-debian}
RABBITMQ_IMAGE=${TEST_RABBITMQ_IMAGE:-payments-local/rabbitmq:3-debian}
REBUILD=false
[[ "${1:-}" == --rebuild ]] && REBUILD=true

say() { printf '[stand-ins] %s\n' "$*"; }

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# debootstrap bookworm with the given packages into a fresh directory; prints the directory.
root_filesystem() {
  local root
  root=$(mktemp -d /tmp/payments-rootfs.XXXXXX)
  debootstrap --variant=minbase --include="$1" bookworm "$root" "$MIRROR" >"$root.log" 2>&1 ||
    { cat "$root.log" >&2; return 1; }
  rm -f "$root.log"
  echo "$root"
}

# What an image needs no copy of.
slim() {
  rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/* \
    "$1"/usr/share/info/* "$1"/var/log/*.log
}

import() {
  local root=$1 image=$2
  shift 2
  local changes=()
  for change in "$@"; do changes+=(--change "$change"); done
  local status=0
  tar -C "$root" --numeric-owner -c . | docker import "${changes[@]}" - "$image" >/dev/null || status=$?
  rm -rf "$root"
  [[ $status == 0 ]] || return $status
  say "$image: $(docker image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
}

build_postgres() {
  local root
  root=$(root_filesystem postgresql-15)
  # The Debian package made a cluster `main`; the entrypoint makes its own in PGDATA on first start.
  rm -rf "$root"/var/lib/postgresql/15 "$root"/etc/postgresql/15
  install -m 0755 "$HERE/stand-ins/postgres-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
  slim "$root"
  import "$root" "$POSTGRES_IMAGE" \
    'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    'ENV PGDATA=/var/lib/postgresql/data' \
    'ENV LANG=C.UTF-8' \
    'EXPOSE 5432' \
    'LABEL org.opencontainers.image.description="Offline stand-in for postgres: Debian bookworm PostgreSQL 15"' \
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    'CMD ["postgres"]'
}

build_rabbitmq() {
  local root
  root=$(root_filesystem rabbitmq-server)
  echo '[rabbitmq_management].' >"$root/etc/rabbitmq/enabled_plugins"
  echo 'NODENAME=rabbit@localhost' >"$root/etc/rabbitmq/rabbitmq-env.conf"
  rm -rf "$root"/var/lib/rabbitmq/mnesia "$root"/var/lib/rabbitmq/.erlang.cookie
  install -m 0755 "$HERE/stand-ins/rabbitmq-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
  slim "$root"
  import "$root" "$RABBITMQ_IMAGE" \
    'ENV LANG=C.UTF-8' \
    'EXPOSE 5672 15672' \
    'LABEL org.opencontainers.image.description="Offline stand-in for rabbitmq: Debian bookworm RabbitMQ 3.10, management on"' \
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    'CMD ["rabbitmq-server"]'
}

pids=()
if $REBUILD || ! have_image "$POSTGRES_IMAGE"; then
  say "building $POSTGRES_IMAGE"
  build_postgres &
  pids+=($!)
else
  say "$POSTGRES_IMAGE is there"
fi
if $REBUILD || ! have_image "$RABBITMQ_IMAGE"; then
  say "building $RABBITMQ_IMAGE"
  build_rabbitmq &
  pids+=($!)
else
  say "$RABBITMQ_IMAGE is there"
fi
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
