/**
 * The hosted app's bundled entry point, dist/serve/index.js (the Docker image's command): what
 * `autopilot serve` runs once the App's credentials are in the environment, without the CLI around it and
 * without compiling TypeScript at start (bin/autopilot.js runs the sources through tsx, which costs the
 * hosted app about two seconds and 60 MB more; docs/PERFORMANCE.md has the figures).
 */
import { serve } from "./serve.js";

try {
  await serve();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
