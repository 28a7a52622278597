# One image for every service and the gateway; docker-compose.yml picks the package with
#   pnpm --filter @payments/<service> start      (each package's start script runs `tsx src/main.ts`)
FROM node:20-slim

ENV CI=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false
RUN npm install -g pnpm@10.34.8 && mkdir -p /app/.data && chown -R node:node /app

WORKDIR /app
USER node

# Dependencies first (cached until the lockfile changes): `pnpm fetch` needs only the lockfile.
COPY --chown=node:node pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch

COPY --chown=node:node . .
# Not --prod: tsx (a dev tool) runs the TypeScript sources.
RUN pnpm install --frozen-lockfile --offline

# Runs like a deployment: production settings (every secret required, no development fallbacks), listening on the
# container's interface. docker-compose.yml passes the secrets from .env (infra/compose/generate-env.sh).
ENV NODE_ENV=production \
    HOST=0.0.0.0
EXPOSE 3001 3002 3003 3004 3005 8080
CMD ["pnpm", "--filter", "@payments/gateway", "start"]
