# syntax=docker/dockerfile:1
# Two stages: the first installs everything, builds dist/ and prunes the dev dependencies; the second
# holds only dist/, the runtime node_modules and the migrations, and runs as the unprivileged `node` user.
# Node 24, the LTS line CI runs the whole suite on (.ci/run); test/scripts/start-command.test.ts holds the
# two together.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here: the build needs the sources, copied next.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# --omit=optional too: the prisma CLI and typescript are optional peers of @prisma/client, which a plain
# --omit=dev keeps (node_modules ~490 MB instead of ~240 MB).
RUN npm run build && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (not npm start) so SIGTERM reaches the server and it shuts down cleanly; the same arguments
# as package.json's start script (test/scripts/start-command.test.ts holds the two together).
CMD ["node", "--v8-pool-size=1", "dist/main.js"]
