# The school-auth service: docker build -t school-auth . (docs/deploy.md)
# Node 22, the LTS line production should run (README, Install).
ARG NODE_IMAGE=node:22-bookworm-slim

# Build with the dev dependencies (TypeScript), then keep only the production ones.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 and @node-rs/argon2 are native: compiled here when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# npm ci runs the package's prepare script, which builds dist/ (scripts/build.mjs); npm prune
# removes TypeScript and keeps dist/.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
WORKDIR /app
# The service's settings inside a container: listen on every interface of the container, keep
# the SQLite database on the volume.
ENV HOST=0.0.0.0 \
    PORT=8000 \
    DATA_DIR=/data
# Owned by root: the service's user can read the code but not change it.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN ln -s /app/dist/cli/main.js /usr/local/bin/school-auth \
 && mkdir -p /data \
 && chown node:node /data \
 && chmod 700 /data
VOLUME ["/data"]
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 8000
# Node itself, no curl in a slim image: healthy while /healthz answers 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form, the file itself: its first line (env -S node with the V8 options) replaces itself
# with node, which is PID 1, so docker stop's SIGTERM reaches the server, which drains and exits 0.
# `docker run IMAGE keys list` runs a command instead.
ENTRYPOINT ["/app/dist/cli/main.js"]
CMD ["serve"]
