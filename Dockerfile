# Autopilot's controller as a hosted GitHub App: `autopilot serve` on Node 24, production dependencies only,
# as the unprivileged `node` user. Build: docker build -t autopilot .
# Run:   docker run -p 3000:3000 -e APP_ID -e PRIVATE_KEY -e WEBHOOK_SECRET autopilot
# (register the App first with `autopilot register` on your machine; see docs/INSTALL.md).
#
# The base is pinned by digest, so a rebuild gets the same Node and Debian until the pin is moved on purpose
# (Dependabot's docker updates, .github/dependabot.yml, propose the next one). The digest is the multi-platform
# index of node:24-slim (Node 24.18.1 on Debian bookworm) as the Docker official images' record lists it:
# https://github.com/docker-library/repo-info/blob/2fb42a7c1204ce90c8bf85e458cec1447d6f2bbb/repos/node/remote/24-slim.md
FROM node:24-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7

# The image's provenance for registries and scanners (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
# Where it was built from comes with the build (empty otherwise):
#   docker build --build-arg REVISION="$(git rev-parse HEAD)" --build-arg SOURCE=https://github.com/OWNER/NAME \
#     --build-arg VERSION="$(node -p 'require("./package.json").version')" -t autopilot .
# REVISION is also the commit `autopilot init` pins the workflows to when run from the image (AUTOPILOT_COMMIT,
# docs/INSTALL.md, "Versions and releases").
ARG REVISION=""
ARG SOURCE=""
ARG VERSION=""
LABEL org.opencontainers.image.title="autopilot" \
      org.opencontainers.image.description="Autopilot's controller as a hosted GitHub App (autopilot serve)" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.base.name="docker.io/library/node:24-slim" \
      org.opencontainers.image.base.digest="sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7"

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    AUTOPILOT_COMMIT=${REVISION}

WORKDIR /app

# Dependencies first, so a source change does not reinstall them. Production dependencies only: the offline
# sandbox (sandbox/, scenarios/) and its packages are development equipment and stay out of the image. The
# command runs the committed bundle dist/serve/index.js, and the CLI (bin/autopilot.js, for `docker run …
# autopilot doctor` and the like) its bundle dist/cli/index.js: no TypeScript sources, no compiler, no build step.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY dist ./dist
COPY controller ./controller
COPY templates ./templates
COPY schema ./schema
COPY app.yml action.yml ./

# `autopilot` on PATH: `docker run … autopilot doctor` and the like, as after a global install.
RUN ln -s /app/bin/autopilot.js /usr/local/bin/autopilot

# Files stay root-owned and read-only to the process.
USER node
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The bundled controller (npm run bundle): `autopilot serve` without compiling TypeScript at start.
CMD ["node", "dist/serve/index.js"]
