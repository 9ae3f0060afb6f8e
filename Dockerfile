# Autopilot's controller as a hosted GitHub App: `autopilot serve` on Node 24, production dependencies only,
# as the unprivileged `node` user. Build: docker build -t autopilot .
# Run:   docker run -p 3000:3000 -e APP_ID -e PRIVATE_KEY -e WEBHOOK_SECRET autopilot
# (register the App first with `npx github:OWNER/autopilot register` on your machine; see docs/INSTALL.md).
FROM node:24-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000

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

# Files stay root-owned and read-only to the process.
USER node
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The bundled controller (npm run bundle): `autopilot serve` without compiling TypeScript at start.
CMD ["node", "dist/serve/index.js"]
