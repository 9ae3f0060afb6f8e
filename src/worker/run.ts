/** The action's entry point (bundled to dist/worker/index.js): nothing but the runner. */
import { run } from "./run-action.js";

await run();
