#!/usr/bin/env node
// The `autopilot` command runs compiled JavaScript only: the CLI's bundle (dist/cli/index.js), or, for
// `autopilot serve` with the App's credentials in the environment, the hosted app's bundle alone
// (dist/serve/index.js, the Docker image's command: it skips the CLI's setup). `npm run bundle` builds both
// (committed, and checked fresh by CI), so a production install has no TypeScript compiler (README
// "Performance"). Only the offline sandbox, development equipment, is compiled from its sources when `start` or
// `sandbox` loads it (src/cli/load-sandbox.ts).
const args = process.argv.slice(2);
const env = process.env;
const credentials = Boolean(env.APP_ID && (env.PRIVATE_KEY || env.PRIVATE_KEY_PATH));
if (args.length === 1 && args[0] === "serve" && credentials) {
  await import("../dist/serve/index.js");
} else {
  await import("../dist/cli/index.js");
}
