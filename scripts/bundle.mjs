// Bundles the two GitHub Actions entry points, the hosted app's (the Docker image's command) and the `autopilot`
// command's (bin/autopilot.js runs it) into dist/ (committed; CI checks it is fresh), so nothing compiles
// TypeScript at run time and a production install needs no compiler.
import { existsSync } from "node:fs";
import { build } from "esbuild";

const entries = [
  { in: "src/worker/worker-entry.ts", out: "dist/worker/index" },
  { in: "src/app/actions/controller-entry.ts", out: "dist/controller/index" },
  { in: "src/app/hosted/serve-entry.ts", out: "dist/serve/index" },
  { in: "src/cli/main.ts", out: "dist/cli/index" },
].filter((entry) => existsSync(entry.in));

// @actions/core imports its OIDC client (and through it @actions/http-client, undici and tunnel: 0.8 MB, parsed
// and run at every start) and its platform helpers (@actions/exec) whether or not they are used; the actions
// use neither. Marked free of side effects, they are left out when nothing the actions call reaches them.
const UNUSED_WHEN_UNREACHED = /^(@actions\/http-client|@actions\/exec|undici|tunnel)(\/.*)?$/;
const dropUnreached = {
  name: "drop-unreached",
  setup(plugin) {
    plugin.onResolve({ filter: UNUSED_WHEN_UNREACHED }, async (args) => {
      if (args.pluginData?.resolving) return undefined;
      const { path, errors } = await plugin.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { resolving: true },
      });
      return errors.length ? { errors } : { path, sideEffects: false };
    });
  },
};

await build({
  entryPoints: entries,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  outdir: ".",
  legalComments: "none",
  // Modules are named by the path they were found at, not the one a symbolic link leads to, so a git worktree
  // whose node_modules links to another checkout's builds the same bundle as a plain clone.
  preserveSymlinks: true,
  logLevel: "warning",
  plugins: [dropUnreached],
  // The queue engine of replicas sharing work through Redis (src/app/hosted/replica-work.ts, reached only by the serve
  // bundle's dynamic import when AUTOPILOT_REDIS_URL is set) is loaded from node_modules at that moment: bundled,
  // its 1.6 MB would be parsed at every start of every replica, with or without Redis. The image and the npm
  // package install it as a production dependency; the actions never reach it.
  // tsx: the CLI compiles the offline sandbox's sources with it when `start` or `sandbox` loads them
  // (src/cli/load-sandbox.ts); it is a development dependency, like the sandbox.
  // smee-client: the relay of WEBHOOK_PROXY_URL (src/app/hosted/webhook-proxy.ts), loaded from node_modules only
  // when that variable is set, likewise.
  external: ["bullmq", "ioredis", "smee-client", "tsx", "tsx/*"],
  // Some dependencies are CommonJS and call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __autopilotCreateRequire } from 'node:module'; const require = __autopilotCreateRequire(import.meta.url);",
  },
});
console.log(`bundled ${entries.map((e) => e.out).join(", ") || "nothing yet"}`);
