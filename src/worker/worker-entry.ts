/** The action's entry point (bundled to dist/worker/index.js): nothing but the runner. */
import { run } from "./worker-action.js";

await run();
