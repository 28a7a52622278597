# Production images: one per service from this one file, picked by the SERVICE build argument
# (identity, ledger, currency, webhook-ingest, webhook-delivery, provider-sandbox, gateway, or provision: the one-shot provisioner).
#
#   docker build --build-arg SERVICE=ledger -t payments-ledger .     # docker-compose.yml builds every one
#
# The build stage installs the workspace, compiles it (pnpm build), builds the operator console (Vite) and makes
# each service's deploy folder
# (infra/deploy-folders.sh: `pnpm deploy --prod`, i.e. the compiled code and production dependencies only).
# The runtime stage is Debian slim with the node binary and that one folder: no pnpm, npm, TypeScript, tsx or
# sources. It runs as an unprivileged user that owns none of its files, and writes nothing at run time, so the
# root filesystem can be read-only (docker-compose.yml: read_only).
# The base images are arguments, so a machine without a registry can build from local stand-ins.
ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV CI=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false
RUN npm install -g pnpm@10.34.8
WORKDIR /workspace
# Dependencies first (cached until the lockfile changes): `pnpm fetch` needs only the lockfile.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline \
 && PNPM=pnpm bash infra/deploy-folders.sh /deploy

FROM ${RUNTIME_IMAGE} AS runtime
ARG SERVICE=gateway
# The official Node build needs only glibc, libstdc++ and libgcc, which Debian slim has.
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY --from=build /deploy/${SERVICE} /app
WORKDIR /app
# Not root, and not the owner of /app (root is): the code cannot be changed from inside.
USER 10001:10001
# Production settings (every secret required, no development fallbacks), listening on the container's interface.
ENV NODE_ENV=production \
    HOST=0.0.0.0
EXPOSE 3001 3002 3003 3004 3005 3006 8080
# The service's liveness on its PORT (docker-compose.yml sets it; the provisioner runs once and has none).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Plain node on the compiled code; the provisioner's folder is started with `node dist/bin/provision.js`.
CMD ["node", "dist/main.js"]
