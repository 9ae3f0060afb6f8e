// Bundles the two GitHub Actions entry points into dist/ (committed; CI checks it is fresh).
import { existsSync } from "node:fs";
import { build } from "esbuild";

const entries = [
  { in: "src/worker/run.ts", out: "dist/worker/index" },
  { in: "src/app/action-run.ts", out: "dist/controller/index" },
].filter((entry) => existsSync(entry.in));

await build({
  entryPoints: entries,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  outdir: ".",
  legalComments: "none",
  logLevel: "warning",
  // Some dependencies are CommonJS and call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __autopilotCreateRequire } from 'node:module'; const require = __autopilotCreateRequire(import.meta.url);",
  },
});
console.log(`bundled ${entries.map((e) => e.out).join(", ") || "nothing yet"}`);
