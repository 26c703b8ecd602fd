# syntax=docker/dockerfile:1
# Build stage: compile TypeScript, then keep production dependencies only.
# Node 24, the active LTS (supported to April 2028): Node 20 reached its end of life in April 2026.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev --ignore-scripts

# Runtime: distroless Node.js 24, no shell, no package manager. Pin the digest of this tag in your
# registry mirror (`@sha256:…`) for reproducible builds.
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Numeric user so the kubelet can verify runAsNonRoot (distroless "nonroot" is uid 65532).
USER 65532:65532
ENV NODE_ENV=production
EXPOSE 8080 8081
# Node and the entry point: the subcommand is the command's only argument, so a Deployment's `args`
# (`run --metrics-secure …`), which replace CMD and keep ENTRYPOINT, replace only it. --expose-gc lets
# the operator run one collection when it goes idle after a burst of work, which gives back the memory
# the burst left reserved (--idle-collect-after-ms).
ENTRYPOINT ["/nodejs/bin/node", "--expose-gc", "dist/src/main.js"]
CMD ["run"]
