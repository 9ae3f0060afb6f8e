#!/usr/bin/env node
// `autopilot serve` with the App's credentials in the environment runs the hosted app's bundle
// (dist/serve/index.js: rebuilt by `npm run bundle` like the actions' bundles, and checked fresh by CI), so the
// server compiles no TypeScript at start (README "Performance"). Everything else — and `serve` before the App is
// registered, which needs the CLI's setup — runs from TypeScript sources through tsx, so a fresh clone needs
// no build step.
import { existsSync } from "node:fs";

const args = process.argv.slice(2);
const env = process.env;
const serveBundle = new URL("../dist/serve/index.js", import.meta.url);
const credentials = Boolean(env.APP_ID && (env.PRIVATE_KEY || env.PRIVATE_KEY_PATH));
if (args.length === 1 && args[0] === "serve" && credentials && existsSync(serveBundle)) {
  await import(serveBundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
