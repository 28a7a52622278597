#!/usr/bin/env bash
# Base images made on this machine, for a Docker engine that cannot pull from a registry: a Debian bookworm root
# from debootstrap (Debian's packages, reached from the host) imported with `docker import`, and on it the host's
# own node binary, and PostgreSQL, RabbitMQ and nginx installed from Debian's packages. Named payments-local/*:
# stand-ins that honour what docker-compose.yml gives the official images (environment, init scripts, the
# healthchecks' commands), never the official images themselves. And the `ha` profile's image (postgres-ha):
# Debian's patroni, postgresql-15, etcd-server and haproxy, which no official image bundles.
#
#   bash infra/containers/base-images.sh [--rebuild] [node|postgres|rabbitmq|nginx|postgres-ha ...]   # as root
#
# An image that exists already is kept unless --rebuild. Work files (roots, the .deb cache) live under
# CONTAINERS_WORK (default /var/tmp/payments-containers); the roots are removed once imported.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=infra/containers/images.env
. "$here/images.env"

work=${CONTAINERS_WORK:-/var/tmp/payments-containers}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
rebuild=false
wanted=()
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=true ;;
    node | postgres | rabbitmq | nginx | postgres-ha) wanted+=("$arg") ;;
    *) echo "usage: $0 [--rebuild] [node|postgres|rabbitmq|nginx|postgres-ha ...]" >&2; exit 2 ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(node postgres rabbitmq nginx)
[ "$(id -u)" = 0 ] || { echo "base-images.sh needs root (debootstrap)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }

log() { echo "[base-images] $*" >&2; }
exists() { docker image inspect "$1" >/dev/null 2>&1; }

# debootstrap ROOT PACKAGES: a minimal bookworm with PACKAGES (and what they depend on), without documentation,
# translations or apt's lists: nothing is installed in these images after they are made.
bootstrap() {
  local root=$1 packages=$2 started=$SECONDS
  rm -rf "$root"
  mkdir -p "$work/debs"
  debootstrap --variant=minbase --include="$packages" --cache-dir="$work/debs" bookworm "$root" "$mirror" \
    >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; exit 1; }
  rm -rf "$root"/usr/share/{doc,man,info,locale,lintian,linda} "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
    "$root"/var/log/* "$root"/tmp/* "$root"/root/.bash_history
  mkdir -p "$root/usr/share/locale"
  log "debootstrap $(basename "$root") ($packages): $((SECONDS - started)) s, $(du -sh "$root" | cut -f1)"
}

# import ROOT IMAGE [--change ...]: the root as one layer; the root is removed afterwards.
import_root() {
  local root=$1 image=$2
  shift 2
  tar --numeric-owner -C "$root" -c . | docker import "$@" - "$image" >/dev/null
  rm -rf "$root" "$root.log"
  log "$image: $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
}

build_node() {
  local root=$work/root-node node
  node=$(command -v node)
  bootstrap "$root" libstdc++6,ca-certificates
  # The host's own node (a single binary needing glibc, libstdc++ and libgcc), where the official image has it.
  install -m 0755 "$(readlink -f "$node")" "$root/usr/local/bin/node"
  import_root "$root" "$NODE_BASE_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]'
}

build_postgres() {
  local root=$work/root-postgres
  bootstrap "$root" postgresql-15
  # Debian's postinst made a cluster "main" of its own; this image makes its cluster at first start instead.
  rm -rf "$root"/var/lib/postgresql/15/main "$root"/etc/postgresql/15/main
  ln -sf /usr/lib/postgresql/15/bin/* "$root/usr/local/bin/"
  install -m 0755 "$here/postgres-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
  mkdir -p "$root/docker-entrypoint-initdb.d" "$root/var/lib/postgresql/data" "$root/var/run/postgresql"
  import_root "$root" "$POSTGRES_STANDIN_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PGDATA=/var/lib/postgresql/data' \
    --change 'VOLUME /var/lib/postgresql/data' \
    --change 'EXPOSE 5432' \
    --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change 'CMD ["postgres"]'
}

build_rabbitmq() {
  local root=$work/root-rabbitmq
  bootstrap "$root" rabbitmq-server
  rm -rf "$root"/var/lib/rabbitmq/mnesia "$root"/var/log/rabbitmq/*
  install -m 0755 "$here/rabbitmq-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
  import_root "$root" "$RABBITMQ_STANDIN_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'VOLUME /var/lib/rabbitmq' \
    --change 'EXPOSE 5672 15672' \
    --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change 'CMD ["rabbitmq-server"]'
}

build_nginx() {
  local root=$work/root-nginx
  bootstrap "$root" nginx
  rm -f "$root"/etc/nginx/sites-enabled/* "$root"/etc/nginx/conf.d/*
  # Like the official image: the configuration in /etc/nginx/conf.d, the master in the foreground.
  import_root "$root" "$EDGE_STANDIN_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'EXPOSE 80' \
    --change 'CMD ["nginx", "-g", "daemon off;"]'
}

# Patroni (its PostgreSQL 15 under it), etcd and HAProxy for the `ha` profile (infra/compose/ha.yml): one image, each
# container running one of them as its command; Patroni's through patroni-entrypoint.sh, as the postgres user.
build_postgres-ha() {
  local root=$work/root-postgres-ha
  bootstrap "$root" postgresql-15,patroni,python3-etcd,etcd-server,haproxy,curl
  rm -rf "$root"/var/lib/postgresql/15/main "$root"/etc/postgresql/15/main
  ln -sf /usr/lib/postgresql/15/bin/* "$root/usr/local/bin/"
  install -m 0755 "$here/patroni-entrypoint.sh" "$root/usr/local/bin/patroni-entrypoint.sh"
  mkdir -p "$root/var/lib/postgresql/data" "$root/var/run/postgresql" "$root/var/lib/etcd"
  import_root "$root" "$POSTGRES_HA_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'EXPOSE 5432 8008 2379 2380' \
    --change 'CMD ["patroni-entrypoint.sh"]'
}

for name in "${wanted[@]}"; do
  case "$name" in
    node) image=$NODE_BASE_IMAGE ;;
    postgres) image=$POSTGRES_STANDIN_IMAGE ;;
    rabbitmq) image=$RABBITMQ_STANDIN_IMAGE ;;
    nginx) image=$EDGE_STANDIN_IMAGE ;;
    postgres-ha) image=$POSTGRES_HA_IMAGE ;;
  esac
  if ! $rebuild && exists "$image"; then
    log "$image exists (--rebuild to make it again)"
    continue
  fi
  started=$SECONDS
  "build_$name"
  log "$image made in $((SECONDS - started)) s"
done
